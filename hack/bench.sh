#!/usr/bin/env bash
# npm run bench: runs every benchmark on real components and writes BENCHMARKS.md.
# Benchmarks measure; they never pass or fail. BENCH_RUNS sets the repetitions (default 5).
source "$(dirname "$0")/lib/common.sh"
require_root "$@"
source "$(dirname "$0")/lib/bench-env.sh"
cd "$(dirname "$0")/.."
bench_environment bench 2000
out=$(mktemp)
export BENCH_RESULTS=$(mktemp)
began=$(date +%s)
# Each benchmark's own time goes to the log, so a run over its budget shows which one grew.
timed() {
  local t=$(date +%s)
  "$@"
  local rc=$?
  log "$(basename "${@: -2:1}" .js): $(( $(date +%s) - t )) s"
  return $rc
}
{
  echo "# kruise-ts benchmarks"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r), node $(node --version)"
  echo "- runs per figure: ${BENCH_RUNS:-5}; figures are median (min–max)"
  echo
  timed node dist/hack/bench/cri-pull.js "$envjson"
  timed node dist/hack/bench/pull-path.js "$envjson"
  timed node dist/hack/bench/startup.js "$envjson"
  timed node dist/hack/bench/crr.js "$envjson"
  # The installation as processes pointed the CRR CRD's conversion webhook at its URL; kubectl apply
  # would merge the Service beside it (both set: refused). The CRDs start from deploy/ again.
  node dist/hack/install-crds.js "$envjson" >&2
  timed node dist/hack/bench/install.js "$envjson"
  # Its kubectl delete -k took the CRDs with it.
  node dist/hack/install-crds.js "$envjson" >&2
  # The scale simulation drives the installed manager, as a cluster would, with the API budget a
  # cluster of that size gives it (as npm run bench:scale's). The manager over thousands of Nodes
  # (hack/bench/manager-scale.ts, 6-7 minutes) runs in npm run bench:scale, which keeps this run
  # under 15 minutes.
  node dist/hack/kruise.js up "$envjson" --rest-config-qps 1000 --rest-config-burst 2000 >&2
  # Its 3 jobs take a minute or two here; a cluster that cannot finish them in 5 is reported, not waited for.
  SIM_NODES=${SIM_NODES:-600} SIM_JOBS=${SIM_JOBS:-3} SIM_JOBS_MINUTES=${SIM_JOBS_MINUTES:-5} timed node dist/test/sim/scale.js "$envjson"
  node dist/hack/kruise.js down "$envjson" >&2
  node dist/hack/bench/compare.js "$BENCH_RESULTS"
  echo "Whole run: $(( ($(date +%s) - began + 30) / 60 )) min on this machine (npm run bench: every benchmark; the build and the environment before them not counted)."
} | tee "$out"
rm -f "$BENCH_RESULTS"
# A section this run did not write (bench:soak's, bench:scale's, a measurement recorded by hand with
# the run it came from) stays as it was; one whose heading this run printed is replaced.
if [ -f BENCHMARKS.md ]; then
  kept=$(awk 'NR == FNR { if (/^## /) printed[$0] = 1; next } /^## / { keep = !($0 in printed) } keep' "$out" BENCHMARKS.md)
  [ -z "$kept" ] || printf '\n%s\n' "$kept" >> "$out"
fi
mv "$out" BENCHMARKS.md
log "wrote BENCHMARKS.md"
