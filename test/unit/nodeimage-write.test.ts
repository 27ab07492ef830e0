import type { NodeImage } from '../../api/types/nodeimage.js';
import { imageEntryPatch } from '../../manager/imagepulljob/nodeimagewrite.js';

const tag = (t: string): { tag: string; version: number } => ({ tag: t, version: 0 });
const ni = (images?: NodeImage['spec']): NodeImage => ({ metadata: { name: 'n1', resourceVersion: '7' }, ...(images !== undefined ? { spec: images } : {}) });

describe('imageEntryPatch', () => {
  it('guards each changed image on its own entry, with the name escaped (RFC 6901)', () => {
    const base = ni({ images: { 'ghcr.io/a/b': { tags: [tag('1')] }, nginx: { tags: [tag('1')] } } });
    const next = ni({ images: { 'ghcr.io/a/b': { tags: [tag('1'), tag('2')] }, nginx: { tags: [tag('1')] } } });
    expect(imageEntryPatch(base, next)).toEqual([
      { op: 'test', path: '/spec/images/ghcr.io~1a~1b', value: { tags: [tag('1')] } },
      { op: 'replace', path: '/spec/images/ghcr.io~1a~1b', value: { tags: [tag('1'), tag('2')] } },
    ]);
  });

  it('adds a new image guarded on its absence, and removes one guarded on what it was', () => {
    const base = ni({ images: { 'x~y': { tags: [tag('1')] } } });
    const next = ni({ images: { busybox: { tags: [tag('1')] } } });
    expect(imageEntryPatch(base, next)).toEqual([
      { op: 'test', path: '/spec/images/x~0y', value: { tags: [tag('1')] } },
      { op: 'remove', path: '/spec/images/x~0y' },
      { op: 'test', path: '/spec/images/busybox', value: null },
      { op: 'add', path: '/spec/images/busybox', value: { tags: [tag('1')] } },
    ]);
  });

  it('has nothing to patch into when the NodeImage has no spec.images (the map is created first)', () => {
    const next = ni({ images: { busybox: { tags: [tag('1')] } } });
    expect(imageEntryPatch(ni(), next)).toBeUndefined();
    expect(imageEntryPatch(ni({}), next)).toBeUndefined();
  });

  it('is empty when nothing changed', () => {
    const base = ni({ images: { busybox: { tags: [tag('1')] } } });
    expect(imageEntryPatch(base, structuredClone(base))).toEqual([]);
  });
});
