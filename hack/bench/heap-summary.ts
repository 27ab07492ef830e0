// Where a V8 heap goes: the self size of every object in a .heapsnapshot, summed by what it is
// (constructor for objects; strings, arrays and code by kind), largest first.
//   node dist/hack/bench/heap-summary.js FILE.heapsnapshot [TOP]
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface HeapRow {
  what: string;
  bytes: number;
  count: number;
}

/** The heap's total self size and its largest groups. */
export function summarizeHeap(file: string, top = 12): { total: number; rows: HeapRow[] } {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
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
