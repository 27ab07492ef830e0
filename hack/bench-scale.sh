#!/usr/bin/env bash
# npm run bench:scale: the scale simulation at full size on its own local cluster (SIM_NODES 5000,
# SIM_JOBS 50, SIM_REST_MINUTES 30 at rest, SIM_WORKERS one per 1,000 nodes), beside the API
# server's own write limit measured in the same run; writes BENCHMARKS.md's "Full scale" section of
# its size (a run at another SIM_NODES keeps its own; the rest of the file is npm run bench's).
# Figures are measurements, never pass or fail.
source "$(dirname "$0")/lib/common.sh"
require_root "$@"
source "$(dirname "$0")/lib/bench-env.sh"
source "$(dirname "$0")/lib/section.sh"
cd "$(dirname "$0")/.."
# The simulated Nodes have no kubelet to renew their heartbeats (5,000 of them would cost the API
# server 500 writes a second). Node lifecycle would turn them Unknown a few minutes in, and the
# manager then gives a tag 1 minute, not 10, before failing it as "node has not responded": a slow
# run measured those retries instead of the fan-out. The run's Nodes stay as created, as healthy ones.
export KRUISE_TS_KCM_CONTROLLERS='*,-nodelifecycle'
bench_environment scale 3500
# The installed manager with the API budget a cluster of this size gives it (as npm run bench's).
node dist/hack/kruise.js up "$envjson" --rest-config-qps 1000 --rest-config-burst 2000 >&2
section=$(mktemp)
began=$(date +%s)
{
  SIM_TITLE="Full scale (npm run bench:scale)" SIM_NODES=${SIM_NODES:-5000} SIM_JOBS=${SIM_JOBS:-50} \
    SIM_REST_SECONDS=$(( ${SIM_REST_MINUTES:-30} * 60 )) node dist/test/sim/scale.js "$envjson"
  echo "Run: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(( ($(date +%s) - began + 30) / 60 )) min; kube-controller-manager ran without node lifecycle (the simulated Nodes send no heartbeats)."
} > "$section"
# The section's own heading (it names the size) is the one it replaces.
replace_section BENCHMARKS.md "$(head -n 1 "$section")" "$section"
cat "$section"
rm -f "$section"
log "wrote the Full scale section of BENCHMARKS.md"
