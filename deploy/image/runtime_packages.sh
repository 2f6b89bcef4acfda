#!/usr/bin/env bash
# Prints the Debian packages a binary needs at run time, one per line: the package that
# owns each library in its ELF NEEDED list (apt adds their own dependencies). The
# Dockerfile's builder stage runs it on build/infera so the runtime stage installs exactly
# these, even as the link line changes; run it on the host to see the list.
#
#   deploy/image/runtime_packages.sh build/infera
set -euo pipefail
bin=${1:?usage: runtime_packages.sh BINARY}
fail=0
declare -A seen=()
ldd_out=$(ldd "$bin")
while read -r lib; do
  path=$(awk -v l="$lib" '$1==l && $3 ~ /^\// {print $3}' <<<"$ldd_out" | head -1)
  if [ -z "$path" ]; then echo "runtime_packages: $lib not found by ldd" >&2; fail=1; continue; fi
  pkg=""
  # usrmerge: dpkg may have registered /lib/... or /usr/lib/..., the link or its target.
  for candidate in "$path" "$(readlink -f "$path")"; do
    for p in "$candidate" "${candidate#/usr}" "/usr$candidate"; do
      pkg=$( (dpkg-query -S "$p" 2>/dev/null || true) | head -1 | cut -d: -f1)
      if [ -n "$pkg" ]; then break 2; fi
    done
  done
  if [ -z "$pkg" ]; then echo "runtime_packages: no package owns $path ($lib)" >&2; fail=1; continue; fi
  seen[$pkg]=1
done < <(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
printf '%s\n' "${!seen[@]}" | sort
exit $fail
