#!/usr/bin/env bash
# npm run bench:soak: kruise-ts under steady churn for SOAK_MINUTES (30) on its own local cluster;
# reports memory and open files every minute and the error lines logged, in BENCHMARKS.md's Soak
# section (the rest of the file is npm run bench's).
source "$(dirname "$0")/lib/common.sh"
require_root "$@"
source "$(dirname "$0")/lib/bench-env.sh"
source "$(dirname "$0")/lib/section.sh"
cd "$(dirname "$0")/.."
bench_environment soak 3000
section=$(mktemp)
{
  node dist/hack/bench/soak.js "$envjson"
  echo
  echo "Run: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores."
} > "$section"
# The Soak section replaces the previous one (up to the next "## " heading), or goes at the end.
replace_section BENCHMARKS.md "## Soak" "$section"
cat "$section"
rm -f "$section"
log "wrote the Soak section of BENCHMARKS.md"
