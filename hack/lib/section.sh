# replace_section FILE HEADING SECTION_FILE: the part of FILE from the line that starts with HEADING
# up to the next "## " heading is replaced by SECTION_FILE's text, or that text goes at the end.
# The benchmarks that write their own section of BENCHMARKS.md (bench:soak, bench:scale) use it.
replace_section() {
  touch "$1"
  node -e '
const fs = require("fs");
const [file, heading, sectionFile] = process.argv.slice(1);
const text = fs.readFileSync(file, "utf8");
const section = fs.readFileSync(sectionFile, "utf8").trimEnd() + "\n";
let start = -1;
for (let at = 0; at < text.length; at = text.indexOf("\n", at) + 1 || text.length) {
  if (text.startsWith(heading, at)) { start = at; break; }
}
if (start < 0) { fs.writeFileSync(file, text.trimEnd() + "\n\n" + section); process.exit(0); }
const rest = text.slice(start + 1);
const next = rest.search(/^## /m);
fs.writeFileSync(file, text.slice(0, start) + section + (next < 0 ? "" : "\n" + rest.slice(next)));
' "$1" "$2" "$3"
}
