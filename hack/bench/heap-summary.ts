// Where a V8 heap goes: the self size of every object in a .heapsnapshot, summed by what it is
// (constructor for objects; strings, arrays and code by kind), largest first.
//   node dist/hack/bench/heap-summary.js FILE.heapsnapshot [TOP]
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface SnapshotMeta {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] }; node_count: number };
}

interface Snapshot {
  meta: SnapshotMeta['snapshot']['meta'];
  nodes: Float64Array;
  strings: string[];
}

/**
 * Reads the parts of a .heapsnapshot the summary needs. A large heap's snapshot is longer than V8's
 * longest string, so the file is never decoded whole: the node array is read number by number from
 * the bytes, and only the header and the string table go through JSON.parse.
 */
function readSnapshot(file: string): Snapshot {
  const buf = readFileSync(file);
  const nodesAt = buf.indexOf('"nodes":[');
  if (nodesAt < 0) throw new Error(`${file}: no node array`);
  const header = JSON.parse(`${buf.subarray(0, nodesAt).toString('utf8').trimEnd().replace(/,$/, '')}}`) as SnapshotMeta;
  const meta = header.snapshot.meta;
  const nodes = new Float64Array(header.snapshot.node_count * meta.node_fields.length);
  let n = 0;
  let value = -1;
  for (let i = nodesAt + '"nodes":['.length; i < buf.length; i++) {
    const c = buf[i] ?? 0;
    if (c >= 48 && c <= 57) value = (value < 0 ? 0 : value * 10) + (c - 48);
    else {
      if (value >= 0) nodes[n++] = value;
      value = -1;
      if (c === 93) break;
    }
  }
  if (n !== nodes.length) throw new Error(`${file}: ${n} node fields, the header says ${nodes.length}`);
  const stringsAt = buf.lastIndexOf('"strings":[');
  const strings = JSON.parse(buf.subarray(stringsAt + '"strings":'.length, buf.lastIndexOf(']') + 1).toString('utf8')) as string[];
  return { meta, nodes, strings };
}

interface HeapRow {
  what: string;
  bytes: number;
  count: number;
}

/** The heap's total self size and its largest groups. */
export function summarizeHeap(file: string, top = 12): { total: number; rows: HeapRow[] } {
  const snap = readSnapshot(file);
  const fields = snap.meta.node_fields;
  const types = snap.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const groups = new Map<string, HeapRow>();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt] ?? 0] ?? '?';
    const size = snap.nodes[i + sizeAt] ?? 0;
    total += size;
    const name = snap.strings[snap.nodes[i + nameAt] ?? 0] ?? '';
    const what =
      type === 'object' ? `${name} objects`
      : type === 'string' || type === 'concatenated string' || type === 'sliced string' ? 'strings'
      : type === 'array' ? `arrays ${name}`
      : type === 'hidden' ? `V8 internals ${name.split(' ')[0] ?? ''}`
      : `${type}`;
    const g = groups.get(what) ?? { what, bytes: 0, count: 0 };
    g.bytes += size;
    g.count++;
    groups.set(what, g);
  }
  return { total, rows: [...groups.values()].sort((a, b) => b.bytes - a.bytes).slice(0, top) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { total, rows } = summarizeHeap(process.argv[2] ?? '', Number(process.argv[3] ?? 12));
  console.log(`heap ${(total / 1048576).toFixed(1)} MiB\n\n| what | MiB | count |\n| --- | --- | --- |`);
  for (const r of rows) console.log(`| ${r.what} | ${(r.bytes / 1048576).toFixed(1)} | ${r.count} |`);
}
