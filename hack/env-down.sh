#!/usr/bin/env bash
# Stops exactly what env-up.sh started (by PID file and by our own sockets) and removes its folder.
# Registry storage and built images stay in the cache for the next run.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/env.sh"
source "$(dirname "$0")/lib/containerd.sh"
source "$(dirname "$0")/lib/registry.sh"
source "$(dirname "$0")/lib/cluster.sh"
require_root "$@"
[ -d "$ENV_DIR" ] || { log "nothing to stop: $ENV_DIR does not exist"; exit 0; }
cluster_down
containerd_down "$LAB_CTRD" purge
registry_down
unmount_under "$ENV_DIR"
rm -rf "$ENV_DIR"
log "environment '$KRUISE_TS_ENV' stopped and removed"
