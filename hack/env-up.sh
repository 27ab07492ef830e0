#!/usr/bin/env bash
# Brings up the local environment: Debian packages, the two registries with the test images, and a
# standalone containerd for CRI tests. Idempotent: what already runs is reused.
# Writes $ENV_DIR/env.json, which tests and the demo read.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/env.sh"
source "$(dirname "$0")/lib/containerd.sh"
source "$(dirname "$0")/lib/registry.sh"
require_root "$@"

start=$(date +%s)
"$(dirname "$0")/install-deps.sh"
mkdir -p "$ENV_DIR"
registry_up
"$(dirname "$0")/build-images.sh"
containerd_up "$LAB_CTRD"

cat > "$ENV_DIR/env.json" <<JSON
{
  "envDir": "$ENV_DIR",
  "criSocket": "$LAB_CTRD/containerd.sock",
  "containerdDir": "$LAB_CTRD",
  "registryOpen": "$REG_OPEN",
  "registryAuth": "$REG_AUTH",
  "registryUser": "$REG_USER",
  "registryPassword": "$REG_PASS",
  "pauseImage": "$PAUSE_IMAGE",
  "manyImages": ${KRUISE_TS_MANY_IMAGES:-100}
}
JSON
log "environment '$KRUISE_TS_ENV' up in $(( $(date +%s) - start )) s"
log "  CRI socket:     unix://$LAB_CTRD/containerd.sock"
log "  registries:     http://$REG_OPEN (open), http://$REG_AUTH ($REG_USER / $REG_PASS)"
log "  description:    $ENV_DIR/env.json"
