#!/usr/bin/env bash
# Brings up the local environment: Debian packages, the two registries with the test images, a
# standalone containerd for CRI tests, and the local cluster (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, KRUISE_TS_NODES real kubelet nodes each on its own
# containerd; KRUISE_TS_CLUSTER=0 leaves the cluster out). Idempotent: what already runs is reused.
# Writes $ENV_DIR/env.json, which tests and the demo read.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/env.sh"
source "$(dirname "$0")/lib/containerd.sh"
source "$(dirname "$0")/lib/registry.sh"
source "$(dirname "$0")/lib/cluster.sh"
require_root "$@"

start=$(date +%s)
"$(dirname "$0")/install-deps.sh"
mkdir -p "$ENV_DIR"
registry_up
"$(dirname "$0")/build-images.sh"
containerd_up "$LAB_CTRD"
nodes_json=""
if [ "${KRUISE_TS_CLUSTER:-1}" = 1 ]; then
  "$(dirname "$0")/build-kube.sh"
  cluster_up
  for i in $(seq 1 "$NODES"); do
    nodes_json="$nodes_json${nodes_json:+,}{\"name\": \"$(node_name "$i")\", \"criSocket\": \"$(node_dir "$i")/ctrd/containerd.sock\", \"containerdDir\": \"$(node_dir "$i")/ctrd\"}"
  done
fi

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
  "manyImages": ${KRUISE_TS_MANY_IMAGES:-100},
  "envName": "$KRUISE_TS_ENV",
  "kubeconfig": "$KUBE_DIR/kubeconfig",
  "restrictedKubeconfig": "$KUBE_DIR/kubeconfig-restricted",
  "apiServer": "https://127.0.0.1:$APISERVER_PORT",
  "kubectl": "$K8S_BIN_DIR/kubectl",
  "auditLog": "$KUBE_DIR/logs/audit.log",
  "nodes": [$nodes_json]
}
JSON
log "environment '$KRUISE_TS_ENV' up in $(( $(date +%s) - start )) s"
log "  CRI socket:     unix://$LAB_CTRD/containerd.sock"
log "  registries:     http://$REG_OPEN (open), http://$REG_AUTH ($REG_USER / $REG_PASS)"
[ -n "$nodes_json" ] && log "  cluster:        https://127.0.0.1:$APISERVER_PORT, $NODES nodes; KUBECONFIG=$KUBE_DIR/kubeconfig"
log "  description:    $ENV_DIR/env.json"
