import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';

// proto/ is our own subset; every name and number in it must equal upstream's so the bytes on the
// wire are the same. Upstream's files come from Debian's containerd source (hack/fetch-upstream-proto.sh).
const upstreamDir = join(process.env['KRUISE_TS_CACHE'] ?? join(homedir(), '.cache', 'kruise-ts'), 'upstream-proto');
const ours = join(import.meta.dirname, '..', '..', 'proto');

function load(text: string): protobuf.Root {
  const cleaned = text
    .replace(/^import\s+(weak\s+)?"(github\.com\/gogo|gogoproto)[^"]*";$/gm, '')
    .replace(/^option \(gogoproto\.[^;]*;$/gm, '')
    .replace(/\s*\[\(gogoproto\.[^\]]*\]/g, '')
    .replace(/,\s*\(gogoproto\.[^\]]*\]/g, ']');
  const root = new protobuf.Root();
  for (const wk of ['timestamp', 'empty', 'field_mask']) {
    const json = protobuf.common.get(`google/protobuf/${wk}.proto`);
    if (json?.nested) root.addJSON(json.nested);
  }
  protobuf.parse(cleaned, root, { keepCase: true });
  root.resolveAll();
  return root;
}

function types(ns: protobuf.NamespaceBase): Array<protobuf.Type | protobuf.Enum | protobuf.Service> {
  const out: Array<protobuf.Type | protobuf.Enum | protobuf.Service> = [];
  for (const o of ns.nestedArray) {
    if (o instanceof protobuf.Type || o instanceof protobuf.Enum || o instanceof protobuf.Service) out.push(o);
    if (o instanceof protobuf.Namespace || o instanceof protobuf.Type) out.push(...types(o));
  }
  return out;
}

function keyType(f: protobuf.Field): string | undefined {
  return f instanceof protobuf.MapField ? f.keyType : undefined;
}

function compare(ourFile: string, upstreamFile: string): string[] {
  const up = join(upstreamDir, upstreamFile);
  if (!existsSync(up)) throw new Error(`${up} is missing: run hack/fetch-upstream-proto.sh`);
  const a = load(readFileSync(join(ours, ourFile), 'utf8'));
  const b = load(readFileSync(up, 'utf8'));
  const problems: string[] = [];
  for (const t of types(a)) {
    const other = b.lookup(t.fullName);
    if (!other) {
      problems.push(`${t.fullName}: not in upstream`);
      continue;
    }
    if (t instanceof protobuf.Type && other instanceof protobuf.Type) {
      for (const f of t.fieldsArray) {
        const g = other.fields[f.name];
        if (!g) problems.push(`${t.fullName}.${f.name}: not in upstream`);
        else if (g.id !== f.id || g.type !== f.type || g.repeated !== f.repeated || keyType(g) !== keyType(f))
          problems.push(`${t.fullName}.${f.name}: ours ${f.type}=${f.id}, upstream ${g.type}=${g.id}`);
      }
    } else if (t instanceof protobuf.Enum && other instanceof protobuf.Enum) {
      for (const [k, v] of Object.entries(t.values)) if (other.values[k] !== v) problems.push(`${t.fullName}.${k}: ${v} vs ${other.values[k]}`);
    } else if (t instanceof protobuf.Service && other instanceof protobuf.Service) {
      for (const m of t.methodsArray) {
        const n = other.methods[m.name];
        if (!n || n.requestType !== m.requestType || n.responseType !== m.responseType || !!n.responseStream !== !!m.responseStream)
          problems.push(`${t.fullName}/${m.name}: signature differs from upstream`);
      }
    } else problems.push(`${t.fullName}: a different kind of definition upstream`);
  }
  return problems;
}

describe('proto/ is wire-compatible with upstream', () => {
  it('CRI runtime.v1 subset', () => expect(compare('cri-api.proto', 'cri-api-v1.proto')).toEqual([]));
  it('containerd content subset', () => expect(compare('containerd-content.proto', 'containerd-content-v1.proto')).toEqual([]));
  it('detects a changed field number (the check can fail)', () => {
    const a = load('syntax = "proto3"; package p; message M { string x = 2; }');
    const b = load('syntax = "proto3"; package p; message M { string x = 1; }');
    expect((a.lookupType('p.M').fields['x'] as protobuf.Field).id).not.toBe((b.lookupType('p.M').fields['x'] as protobuf.Field).id);
  });
});
