# The environment a benchmark runs in, shared by hack/bench.sh, bench-scale.sh and bench-soak.sh.
# Sourced after common.sh: bench_environment NAME OFFSET installs what is needed, builds, brings up
# the environment KRUISE_TS_ENV=NAME (ports moved by KRUISE_TS_PORT_OFFSET, default OFFSET) with the
# project's CRDs, stops it on exit (with a kruise-ts the benchmark installed on it), and sets envjson
# to its description.
bench_environment() {
  export KRUISE_TS_ENV=$1 KRUISE_TS_PORT_OFFSET=${KRUISE_TS_PORT_OFFSET:-$2}
  bash hack/install-deps.sh
  [ -d node_modules ] || npm ci --no-audit --no-fund
  npm run --silent build
  envjson=/tmp/kruise-ts-$KRUISE_TS_ENV/env.json
  trap bench_environment_down EXIT
  bash hack/env-up.sh
  node dist/hack/install-crds.js "$envjson"
}

# A run stopped midway (Ctrl-C, a failed step) exits before its own `kruise.js down`: its manager and
# daemons would go on running, retrying against an API server that is gone.
bench_environment_down() {
  if [ -f "$envjson" ]; then node dist/hack/kruise.js down "$envjson" >&2 || true; fi
  bash hack/env-down.sh
}
