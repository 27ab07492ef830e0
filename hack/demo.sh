#!/usr/bin/env bash
# The README's main command (npm run demo): on one Debian machine (as root) installs what is
# missing, starts a private environment — a registry with sample images, a local Kubernetes
# cluster with real kubelet nodes (each on its own containerd) — installs kruise-ts on it as users
# do (its image built here, kubectl apply -k), runs the examples of deploy/examples, shows live
# progress and a summary, and stops everything at the end.
# The first run builds the cluster's binaries (about 8 minutes on 2 cores); later runs start in
# seconds.
source "$(dirname "$0")/lib/common.sh"
require_root "$@"
cd "$(dirname "$0")/.."
# KRUISE_TS_DEMO_ENV / KRUISE_TS_DEMO_PORT_OFFSET let a test run the demo next to another environment.
export KRUISE_TS_ENV=${KRUISE_TS_DEMO_ENV:-demo} KRUISE_TS_PORT_OFFSET=${KRUISE_TS_DEMO_PORT_OFFSET:-1000}
bash hack/install-deps.sh
bash hack/build-kube.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then npm ci --no-audit --no-fund; fi
npm run --silent build
trap 'bash hack/env-down.sh' EXIT
bash hack/env-up.sh
node dist/hack/demo.js "/tmp/kruise-ts-$KRUISE_TS_ENV/env.json"
