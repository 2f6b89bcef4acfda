#!/usr/bin/env bash
# The one npm installer of the test trees: tests/clients (the openai client), deploy/
# (manifest validators, for tests/deploy) and tests/browser (playwright-core for the web
# console's browser test). Usage: tests/npm_install.sh <dir with package-lock.json> <label>
# Installs exactly the lock file's versions (npm ci) into <dir>/node_modules.
# Idempotent and fast: nothing runs when node_modules was installed from the same lock
# file with the same Node major version. Needs Node >= 18 + npm (scripts/install_deps.sh)
# and the npm registry, first time only. Exits non-zero when it cannot install: the tests
# that need the packages then fail (they never skip).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 <dir> [label]" >&2
  exit 2
fi
dir=$(cd "$1" && pwd)
label=${2:-$(basename "$dir")}
stamp="$dir/node_modules/.infera-install-stamp"
# Test suites run in parallel (make test's TEST_JOBS) and two of them may install the same
# tree at once: one installer per tree at a time, the second then finds the stamp.
lock="${TMPDIR:-/tmp}/infera-npm-install-$(printf '%s' "$dir" | sha256sum | cut -c1-16).lock"
exec 9>"$lock"
flock 9

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "npm_install: node/npm not found (scripts/install_deps.sh installs them)" >&2
  exit 1
fi
want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1) node$(node -p 'process.versions.node.split(".")[0]')"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "npm_install: $dir/node_modules up to date"
  exit 0
fi
echo "npm_install: npm ci in $dir ($label)"
# A lock file for another tree (e.g. edited by hand) makes `npm ci` refuse: say so.
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
echo "$want" >"$stamp"
