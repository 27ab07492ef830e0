# The environment a benchmark runs in, shared by hack/bench.sh and hack/bench-soak.sh. Sourced after
# common.sh: bench_environment NAME OFFSET installs what is needed, builds, brings up the
# environment KRUISE_TS_ENV=NAME (ports moved by KRUISE_TS_PORT_OFFSET, default OFFSET) with the
# project's CRDs, stops it on exit, and sets envjson to its description.
bench_environment() {
  export KRUISE_TS_ENV=$1 KRUISE_TS_PORT_OFFSET=${KRUISE_TS_PORT_OFFSET:-$2}
  bash hack/install-deps.sh
  [ -d node_modules ] || npm ci --no-audit --no-fund
  npm run --silent build
  trap 'bash hack/env-down.sh' EXIT
  bash hack/env-up.sh
  envjson=/tmp/kruise-ts-$KRUISE_TS_ENV/env.json
  node dist/hack/install-crds.js "$envjson"
}
