#!/usr/bin/env bash
# Installs the official API clients the integration tests drive (tests/clients/package.json,
# exact versions pinned in tests/clients/package-lock.json) into tests/clients/node_modules,
# through the shared installer (tests/npm_install.sh: idempotent, npm ci).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../npm_install.sh" "$here" "openai"
