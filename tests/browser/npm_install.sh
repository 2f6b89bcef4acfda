#!/usr/bin/env bash
# Installs playwright-core (tests/browser/package.json, pinned in package-lock.json) into
# tests/browser/node_modules through the shared installer (tests/npm_install.sh). The
# browser itself is Debian's chromium (scripts/install_deps.sh), never a download.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../npm_install.sh" "$here" "playwright-core"
