import { ListSplitter } from '../../kube/list-splitter.js';

/** Feeds `text` in chunks cut at `cuts`; returns the items and the metadata, or throws. */
function split(text: string | Buffer, cuts: number[] = []): { items: unknown[]; metadata: unknown } {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const items: unknown[] = [];
  const s = new ListSplitter((item) => items.push(item));
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    s.write(bytes.subarray(from, at));
    from = at;
  }
  return { items, metadata: s.end() };
}

// Strings that hold what the splitter counts: brackets, quotes, backslashes, the key it looks for,
// and characters of two, three and four bytes, which a chunk boundary can cut in two.
const tricky = {
  apiVersion: 'v1',
  kind: 'List',
  metadata: { resourceVersion: '42', continue: 'eyJ2Ijoi"}]', remainingItemCount: 3 },
  items: [
    { metadata: { name: 'a', annotations: { x: '{[}]"\\', y: '\\"', z: '"items":[' } }, spec: { n: [1, [2, { m: null }]] } },
    { metadata: { name: 'é日本🚀' }, data: 'caf\u00e9 \u2028 \ud83d\ude80', e: {}, f: [] },
    { metadata: { name: 'c', items: [{ not: 'an item' }] } },
  ],
};

describe('ListSplitter', () => {
  it('hands on every item and the metadata whatever the chunk boundaries, even within a character', () => {
    const text = JSON.stringify(tricky);
    const want = { items: tricky.items, metadata: tricky.metadata };
    expect(split(text)).toEqual(want);
    const len = Buffer.byteLength(text);
    for (let at = 0; at <= len; at++) expect(split(text, [at])).toEqual(want);
    expect(split(text, Array.from({ length: len }, (_, i) => i))).toEqual(want);
  });

  it('reads indented JSON, metadata after the items, and an array of another key before them', () => {
    const text = JSON.stringify({ items: tricky.items, other: [{ a: 1 }], metadata: tricky.metadata }, null, 2);
    expect(split(text, [7, 100, 101])).toEqual({ items: tricky.items, metadata: tricky.metadata });
    expect(split(JSON.stringify({ other: [{ a: 1 }], items: [{ b: 2 }] }))).toEqual({ items: [{ b: 2 }], metadata: {} });
  });

  it('reads an empty list, and items null', () => {
    expect(split('{"kind":"List","metadata":{"resourceVersion":"1"},"items":[]}')).toEqual({ items: [], metadata: { resourceVersion: '1' } });
    expect(split('{"metadata":{},"items":null}')).toEqual({ items: [], metadata: {} });
  });

  it('finds a list cut short at any byte', () => {
    const text = JSON.stringify(tricky);
    for (let at = 0; at < Buffer.byteLength(text); at++) {
      expect(() => split(Buffer.from(text).subarray(0, at))).toThrow();
    }
  });

  it.each([
    ['an element that is not an object', '{"items":[{"a":1},2]}', 'an element of items is not an object'],
    ['an item that is no JSON', '{"items":[{"a":tru}]}', 'JSON'],
    ['a bracket too many', '{"items":[]}}', 'a closing bracket without its opening one'],
    ['no items', '{"kind":"Status","metadata":{}}', 'not a list'],
    ['a root that is no object', '[{"items":[]}]', 'not an object'],
    ['text after the root', '{"items":[]} x', 'JSON'],
  ])('refuses %s', (_what, text, message) => {
    expect(() => split(text)).toThrow(message);
  });

  it('passes on what onItem throws, and stops there', () => {
    const seen: unknown[] = [];
    const s = new ListSplitter((item) => {
      seen.push(item);
      throw new Error('full');
    });
    expect(() => s.write(Buffer.from('{"items":[{"a":1},{"b":2}]}'))).toThrow('full');
    expect(seen).toEqual([{ a: 1 }]);
  });
});
