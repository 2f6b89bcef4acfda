#!/usr/bin/env bash
# Installs the manifest validators (deploy/package.json, exact versions pinned in
# deploy/package-lock.json) into deploy/node_modules, the project-local tree that
# deploy/tools/validate_k8s.mjs uses, through the shared installer (tests/npm_install.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../npm_install.sh" "$here/../../deploy" "kubernetes-models, @kubernetes-models/keda, typescript"
