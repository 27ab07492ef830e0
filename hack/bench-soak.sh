#!/usr/bin/env bash
# npm run bench:soak: kruise-ts under steady churn for SOAK_MINUTES (30) on its own local cluster;
# reports memory and open files every minute and the error lines logged, in BENCHMARKS.md's Soak
# section (the rest of the file is npm run bench's).
source "$(dirname "$0")/lib/common.sh"
require_root "$@"
source "$(dirname "$0")/lib/bench-env.sh"
cd "$(dirname "$0")/.."
bench_environment soak 3000
section=$(mktemp)
{
  node dist/hack/bench/soak.js "$envjson"
  echo
  echo "Run: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores."
} > "$section"
# The Soak section replaces the previous one (up to the next "## " heading), or goes at the end.
touch BENCHMARKS.md
node -e '
const fs = require("fs");
const [file, sectionFile] = process.argv.slice(1);
const text = fs.readFileSync(file, "utf8");
const section = fs.readFileSync(sectionFile, "utf8").trimEnd() + "\n";
const start = text.search(/^## Soak/m);
if (start < 0) { fs.writeFileSync(file, text.trimEnd() + "\n\n" + section); process.exit(0); }
const rest = text.slice(start + 1);
const next = rest.search(/^## /m);
fs.writeFileSync(file, text.slice(0, start) + section + (next < 0 ? "" : "\n" + rest.slice(next)));
' BENCHMARKS.md "$section"
cat "$section"
rm -f "$section"
log "wrote the Soak section of BENCHMARKS.md"
