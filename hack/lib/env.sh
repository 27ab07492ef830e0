# Names every path and port of one local environment. Sourced after common.sh.
# Two environments can run side by side on one host: give each its own KRUISE_TS_ENV name
# (and KRUISE_TS_PORT_OFFSET); every folder and port below follows from those two.
KRUISE_TS_ENV=${KRUISE_TS_ENV:-test}
KRUISE_TS_PORT_OFFSET=${KRUISE_TS_PORT_OFFSET:-0}
ENV_DIR=${KRUISE_TS_ENV_DIR:-/tmp/kruise-ts-$KRUISE_TS_ENV}
CACHE_DIR=${KRUISE_TS_CACHE:-${HOME:-/root}/.cache/kruise-ts}

REG_OPEN_PORT=$((5000 + KRUISE_TS_PORT_OFFSET))
REG_AUTH_PORT=$((5001 + KRUISE_TS_PORT_OFFSET))
REG_OPEN=127.0.0.1:$REG_OPEN_PORT
REG_AUTH=127.0.0.1:$REG_AUTH_PORT
REG_USER=tester
REG_PASS=s3cret-pass
PAUSE_IMAGE=$REG_OPEN/pause:1.0
# Registry storage outlives an environment so images are built and pushed once per machine.
REG_STORE=$CACHE_DIR/registry-$KRUISE_TS_ENV

# The standalone containerd that CRI tests drive directly (no kubelet may share it: a kubelet kills
# every pod it does not own).
LAB_CTRD=$ENV_DIR/ctrd-lab

export KRUISE_TS_ENV KRUISE_TS_PORT_OFFSET ENV_DIR CACHE_DIR REG_OPEN REG_AUTH

# The local Kubernetes cluster (control plane + real kubelet nodes, each with its own containerd).
K8S_BIN_DIR=$CACHE_DIR/k8s-1.20.2/bin
# Another kube-apiserver build for the scale benchmark's comparison (hack/build-kube.sh --watch-chan-size).
APISERVER_BIN=${KRUISE_TS_APISERVER_BIN:-$K8S_BIN_DIR/kube-apiserver}
KUBE_DIR=$ENV_DIR/kube
NODES=${KRUISE_TS_NODES:-2}
# kube-controller-manager's controllers; the scale benchmark turns node lifecycle off (bench-scale.sh).
KCM_CONTROLLERS=${KRUISE_TS_KCM_CONTROLLERS:-*}
ETCD_CLIENT_PORT=$((12379 + KRUISE_TS_PORT_OFFSET))
ETCD_PEER_PORT=$((12380 + KRUISE_TS_PORT_OFFSET))
APISERVER_PORT=$((6443 + KRUISE_TS_PORT_OFFSET))
KCM_PORT=$((10257 + KRUISE_TS_PORT_OFFSET))
SCHED_PORT=$((10359 + KRUISE_TS_PORT_OFFSET))
ADMIN_TOKEN=kruise-ts-admin-token
RESTRICTED_TOKEN=kruise-ts-restricted-token
# The kubelet rewrites host sysctls; one save file per host, shared by every environment, so a
# teardown never restores values another environment changed.
SYSCTL_SAVE=/tmp/kubelet-lab.sysctl.orig

node_name() { echo "node-$1"; }
# Addresses of this environment, on the host's loopback interface: the API server's (where the
# `kubernetes` Service leads) and one per node, which its host-network pods bind to, so two nodes
# on one host never share a port. The Service range is this environment's own too.
NET_ID=$(( KRUISE_TS_PORT_OFFSET / 100 % 250 ))
API_IP=10.245.$NET_ID.1
SERVICE_CIDR=10.96.$NET_ID.0/24
KUBERNETES_SVC_IP=10.96.$NET_ID.1
node_ip() { echo "10.245.$NET_ID.$((10 + $1))"; }
node_dir() { echo "$ENV_DIR/node-$1"; }
kubelet_port() { echo $((10350 + 100 * ($1 - 1) + KRUISE_TS_PORT_OFFSET)); }
kubelet_healthz_port() { echo $((10348 + 100 * ($1 - 1) + KRUISE_TS_PORT_OFFSET)); }
cgroup_root() { echo "kruise-ts-$KRUISE_TS_ENV-node-$1"; }
