# Sourced by the image scripts: a private podman/buildah configuration for this project,
# so nothing under /etc is edited (see ../shared/docs/environment.md "Containers without
# Docker"). Writes the two files once into $INFERA_IMAGE_DIR and exports
#   CONTAINERS_CONF, CONTAINERS_STORAGE_CONF
# runc + cgroupfs (crun fails on hosts with hybrid cgroups), limits no higher than the
# host's, file event log (no journald/systemd here).
#
# INFERA_IMAGE_DIR      config files (default: <repo>/build-image; git-ignored)
# INFERA_PODMAN_ROOT    image/container storage (default: /var/tmp/infera-containers)

_infera_repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
INFERA_IMAGE_DIR=${INFERA_IMAGE_DIR:-$_infera_repo_root/build-image}
INFERA_PODMAN_ROOT=${INFERA_PODMAN_ROOT:-/var/tmp/infera-containers}
mkdir -p "$INFERA_IMAGE_DIR"

if [ -z "${CONTAINERS_CONF:-}" ]; then
  cat >"$INFERA_IMAGE_DIR/containers.conf.tmp" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$INFERA_PODMAN_ROOT/events.log"
CONF
  mv "$INFERA_IMAGE_DIR/containers.conf.tmp" "$INFERA_IMAGE_DIR/containers.conf"
  export CONTAINERS_CONF="$INFERA_IMAGE_DIR/containers.conf"
fi
if [ -z "${CONTAINERS_STORAGE_CONF:-}" ]; then
  cat >"$INFERA_IMAGE_DIR/storage.conf.tmp" <<CONF
[storage]
driver = "overlay"
graphroot = "$INFERA_PODMAN_ROOT/storage"
runroot = "/run/infera-containers"
CONF
  mv "$INFERA_IMAGE_DIR/storage.conf.tmp" "$INFERA_IMAGE_DIR/storage.conf"
  export CONTAINERS_STORAGE_CONF="$INFERA_IMAGE_DIR/storage.conf"
fi
mkdir -p "$INFERA_PODMAN_ROOT"
