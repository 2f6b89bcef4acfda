#!/usr/bin/env bash
# Installs the official API clients the integration tests drive (tests/clients/package.json,
# exact versions pinned in tests/clients/package-lock.json) into tests/clients/node_modules.
# Idempotent and fast: nothing runs when node_modules was installed from the same lock
# file with the same Node major version. Needs Node >= 18 + npm (scripts/install_deps.sh)
# and the npm registry, first time only. Exits non-zero when it cannot install: the
# tests that need the clients then fail (they never skip).
set -euo pipefail
clients=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stamp="$clients/node_modules/.infera-install-stamp"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "npm_install: node/npm not found (scripts/install_deps.sh installs them)" >&2
  exit 1
fi
want="$(sha256sum "$clients/package-lock.json" | cut -d' ' -f1) node$(node -p 'process.versions.node.split(".")[0]')"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "npm_install: tests/clients/node_modules up to date"
  exit 0
fi
echo "npm_install: npm ci in tests/clients/ (openai)"
(cd "$clients" && npm ci --no-audit --no-fund --loglevel=error)
echo "$want" >"$stamp"
