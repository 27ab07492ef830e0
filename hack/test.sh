#!/usr/bin/env bash
# The README's test command: on a fresh Debian machine (as root) installs what is missing, builds,
# brings the real local environment up, runs type-check, lint and every jest suite, and stops the
# environment again, also when something fails.
source "$(dirname "$0")/lib/common.sh"
require_root "$@"
cd "$(dirname "$0")/.."
export KRUISE_TS_ENV=${KRUISE_TS_ENV:-test}
bash hack/install-deps.sh
bash hack/build-kube.sh
bash hack/fetch-upstream-proto.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then npm ci --no-audit --no-fund; fi
trap 'bash hack/env-down.sh' EXIT
bash hack/env-up.sh
KRUISE_TS_ENV_JSON="/tmp/kruise-ts-$KRUISE_TS_ENV/env.json" npm test
