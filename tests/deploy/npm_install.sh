#!/usr/bin/env bash
# Installs the manifest validators (deploy/package.json, exact versions pinned in
# deploy/package-lock.json) into deploy/node_modules, the project-local tree that
# deploy/tools/validate_k8s.mjs uses. Idempotent and fast: nothing runs when
# node_modules was installed from the same lock file with the same Node major version.
# Needs Node >= 18 + npm (scripts/install_deps.sh) and the npm registry, first time only.
set -euo pipefail
deploy=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../deploy" && pwd)
stamp="$deploy/node_modules/.infera-install-stamp"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "npm_install: node/npm not found (scripts/install_deps.sh installs them)" >&2
  exit 1
fi
want="$(sha256sum "$deploy/package-lock.json" | cut -d' ' -f1) node$(node -p 'process.versions.node.split(".")[0]')"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "npm_install: deploy/node_modules up to date"
  exit 0
fi
echo "npm_install: npm ci in deploy/ (kubernetes-models, @kubernetes-models/keda, typescript)"
# A lock file for another tree (e.g. edited by hand) makes `npm ci` refuse: say so.
(cd "$deploy" && npm ci --no-audit --no-fund --loglevel=error)
echo "$want" >"$stamp"
