#!/usr/bin/env bash
# npm run bench:scale: on its own local cluster, first the manager over thousands of Nodes
# (hack/bench/manager-scale.ts: one job over BENCH_NODES 5000, then 200 jobs over 1,000 at rest),
# then a re-list of 2,000 and 5,000 NodeImages read whole beside streamed
# (hack/bench/relist-memory.ts), then the scale simulation at full size (SIM_NODES 5000, SIM_JOBS
# 50 for at most SIM_JOBS_MINUTES 45, SIM_REST_MINUTES 30 at rest, SIM_WORKERS one per 1,000
# nodes), beside the API server's own write limit measured in the same run. Writes BENCHMARKS.md's "kruise-manager at scale" and
# re-list sections and the "Full scale" section of its size (a run at another SIM_NODES keeps its
# own; the rest of the file is npm run bench's). BENCH_SCALE_STEPS names the steps to run (default
# all: manager relist simulation), e.g. the simulation alone after a change to the daemon.
# Figures are measurements, never pass or fail.
source "$(dirname "$0")/lib/common.sh"
require_root "$@"
source "$(dirname "$0")/lib/bench-env.sh"
source "$(dirname "$0")/lib/section.sh"
cd "$(dirname "$0")/.."
steps=" ${BENCH_SCALE_STEPS:-manager relist simulation} "
for step in $steps; do
  case $step in manager | relist | simulation) ;; *) die "BENCH_SCALE_STEPS: no step '$step' (steps: manager relist simulation)" ;; esac
done
runs() { [[ "$steps" == *" $1 "* ]]; }
# The simulated Nodes have no kubelet to renew their heartbeats (5,000 of them would cost the API
# server 500 writes a second). Node lifecycle would turn them Unknown a few minutes in, and the
# manager then gives a tag 1 minute, not 10, before failing it as "node has not responded": a slow
# run measured those retries instead of the fan-out. The run's Nodes stay as created, as healthy ones.
export KRUISE_TS_KCM_CONTROLLERS='*,-nodelifecycle'
# The commit the build came from: a commit made while the run goes on must not be named as its source.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
bench_environment scale 3500
run_line() {
  echo "Run: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $commit, $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(( ($(date +%s) - $1 + 30) / 60 )) min$2"
}
# A step run without the others says so in its Run line.
alone=
runs manager && runs relist && runs simulation || alone=", BENCH_SCALE_STEPS=${BENCH_SCALE_STEPS}"
section=$(mktemp)
# The section a step just wrote to $section takes the place of the one of its heading in
# BENCHMARKS.md (the heading names the step and, for the simulation, its size), and is shown.
write_section() {
  replace_section BENCHMARKS.md "$(head -n 1 "$section")" "$section"
  cat "$section"
}
# First, on the empty cluster: it runs a manager of its own and removes its thousands of objects
# before the simulation creates its own.
if runs manager; then
  began=$(date +%s)
  {
    node dist/hack/bench/manager-scale.js "$envjson"
    run_line "$began" " (npm run bench:scale$alone)."
  } > "$section"
  write_section
fi
# 2,000 NodeImages of 50 tags, where both ways of reading fit the manager's heap, and 5,000, the
# simulation's size, where it ran out reading whole.
if runs relist; then
  for n in 2000 5000; do
    began=$(date +%s)
    {
      BENCH_RELIST_NODES=$n node dist/hack/bench/relist-memory.js "$envjson"
      run_line "$began" " (npm run bench:scale$alone)."
    } > "$section"
    write_section
  done
fi
if runs simulation; then
  # The installed manager with the API budget a cluster of this size gives it (as npm run bench's).
  node dist/hack/kruise.js up "$envjson" --rest-config-qps 1000 --rest-config-burst 2000 >&2
  began=$(date +%s)
  {
    # The 50 jobs at 5,000 nodes took 27 minutes on 2 cores (BENCHMARKS.md, "50 jobs at once over
    # 5,000 simulated nodes: complete"); a machine that cannot finish them in SIM_JOBS_MINUTES gets
    # a section saying how far they got and how the API server answered, and the run goes on.
    SIM_TITLE="Full scale (npm run bench:scale${KRUISE_TS_APISERVER_BIN:+, $(basename "$KRUISE_TS_APISERVER_BIN")})" SIM_NODES=${SIM_NODES:-5000} SIM_JOBS=${SIM_JOBS:-50} SIM_JOBS_MINUTES=${SIM_JOBS_MINUTES:-45} \
      SIM_REST_SECONDS=$(( ${SIM_REST_MINUTES:-30} * 60 )) node dist/test/sim/scale.js "$envjson"
    run_line "$began" "$alone; kube-controller-manager ran without node lifecycle (the simulated Nodes send no heartbeats)."
  } > "$section"
  write_section
fi
rm -f "$section"
log "wrote the sections of BENCHMARKS.md of the steps:$steps"
