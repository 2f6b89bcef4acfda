#!/usr/bin/env bash
# Makes `debian:bookworm-slim` available to podman on a machine with no registry access:
# debootstrap (minbase) from the host's Debian mirror, then `podman import` under that
# name, so `podman build --pull=never` resolves the Dockerfile's FROM lines locally.
# Cached: nothing is done when the image already exists (~2 minutes cold).
# Elsewhere (Docker, or podman with a registry) the real image is pulled instead and this
# script is not needed.
#
#   deploy/image/base_image.sh [--force]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=podman_env.sh
source "$here/podman_env.sh"

NAME=debian:bookworm-slim
if [ "${1:-}" != "--force" ] && podman image exists "$NAME"; then
  echo "base_image: $NAME present"
  exit 0
fi
command -v debootstrap >/dev/null || {
  echo "base_image: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }

# The host's mirror: first URIs line of debian.sources (deb822), else sources.list.
mirror=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list)
fi
mirror=${mirror:-http://deb.debian.org/debian}

root="$INFERA_PODMAN_ROOT/debootstrap-bookworm"
rm -rf "$root"
echo "base_image: debootstrap --variant=minbase bookworm from $mirror"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$INFERA_IMAGE_DIR/debootstrap.log" 2>&1 || {
  tail -20 "$INFERA_IMAGE_DIR/debootstrap.log" >&2; exit 1; }

# Same apt sources as the host (updates + security), so packages match what the host
# builds against; and the host's tolerance of a snapshot mirror's old Release files.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/debian.sources"
  rm -f "$root/etc/apt/sources.list"
fi
if apt-config dump 2>/dev/null | grep -q 'Acquire::Check-Valid-Until "false"'; then
  printf 'Acquire::Check-Valid-Until "false";\nAcquire::Check-Date "false";\n' \
    >"$root/etc/apt/apt.conf.d/99snapshot-mirror"
fi
# What makes the official image "slim": no docs, man pages or translations; no apt caches.
cat >"$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
CFG
printf 'APT::Install-Recommends "false";\n' >"$root/etc/apt/apt.conf.d/99no-recommends"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
       "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/*

tar -C "$root" -c . | podman import -q --change 'CMD ["bash"]' - "$NAME" >/dev/null
rm -rf "$root"
echo "base_image: imported $NAME ($(podman image inspect --format '{{.Size}}' "$NAME") bytes)"
