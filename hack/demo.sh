#!/usr/bin/env bash
# The README's main command: brings up a private environment (registries with sample images and a
# containerd), runs kruise-ts against it, shows what happens, and stops everything at the end.
source "$(dirname "$0")/lib/common.sh"
require_root "$@"
cd "$(dirname "$0")/.."
export KRUISE_TS_ENV=demo KRUISE_TS_PORT_OFFSET=${KRUISE_TS_PORT_OFFSET:-1000}
bash hack/install-deps.sh
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run --silent build
trap 'bash hack/env-down.sh' EXIT
bash hack/env-up.sh
node dist/hack/demo/cri-pull.js "/tmp/kruise-ts-demo/env.json"
log "demo finished; stopping the environment"
