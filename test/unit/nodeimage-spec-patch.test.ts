import type { ImageTagSpec, ImageTagStatus, NodeImage } from '../../api/types/nodeimage.js';
import { pointer, testsHold } from '../../kube/json-patch.js';
import { nodeImageSpecPatch } from '../../manager/nodeimage/spec-patch.js';

const tag = (t: string, over: Partial<ImageTagSpec> = {}): ImageTagSpec => ({ tag: t, createdAt: '2026-12-06T10:00:00Z', version: 0, ...over });
const status = (t: string, phase: ImageTagStatus['phase']): ImageTagStatus => ({ tag: t, phase, version: 0 });

function ni(images: Record<string, ImageTagSpec[]>, statuses: Record<string, ImageTagStatus[]> = {}, generation: number | null = 3): NodeImage {
  return {
    metadata: { name: 'n1', resourceVersion: '10', ...(generation !== null ? { generation } : {}) },
    spec: { images: Object.fromEntries(Object.entries(images).map(([k, tags]) => [k, { tags }])) },
    status: { desired: 0, imageStatuses: Object.fromEntries(Object.entries(statuses).map(([k, tags]) => [k, { tags }])) },
  };
}
const withSpec = (o: NodeImage, images: Record<string, ImageTagSpec[]>): NodeImage => ({ ...o, spec: ni(images).spec ?? {} });

describe('JSON pointers and patch tests', () => {
  it('escapes "~" and "/" in a segment (image names hold slashes)', () => {
    expect(pointer('status', 'imageStatuses', 'ghcr.io/x~y', 'tags', '0')).toBe('/status/imageStatuses/ghcr.io~1x~0y/tags/0');
  });

  it('holds when every test finds its value, not when one moved or is gone', () => {
    const doc = { metadata: { generation: 3 }, status: { imageStatuses: { 'a/b': { tags: [{ tag: '1', phase: 'Pulling' }] } } } };
    const patch = [
      { op: 'test' as const, path: '/metadata/generation', value: 3 },
      { op: 'test' as const, path: '/status/imageStatuses/a~1b/tags/0', value: { tag: '1', phase: 'Pulling' } },
      { op: 'add' as const, path: '/spec', value: {} },
    ];
    expect(testsHold(patch, doc)).toBe(true);
    expect(testsHold(patch, { ...doc, metadata: { generation: 4 } })).toBe(false);
    expect(testsHold(patch, { metadata: { generation: 3 } })).toBe(false);
  });
});

describe('the jobs NodeImage spec write as a guarded patch', () => {
  it('a new image tests the generation alone and carries the whole new spec', () => {
    const current = ni({ old: [tag('1')] }, { old: [status('1', 'Pulling')] });
    const next = withSpec(current, { old: [tag('1')], fresh: [tag('2')] });
    expect(nodeImageSpecPatch(current, next)).toEqual([
      { op: 'test', path: '/metadata/generation', value: 3 },
      { op: 'add', path: '/spec', value: next.spec },
    ]);
  });

  it("tests the status of each changed tag that has one, at its place in the image's list", () => {
    const current = ni({ 'r.io/app': [tag('a'), tag('b')] }, { 'r.io/app': [status('a', 'Succeeded'), status('b', 'Pulling')] });
    const next = withSpec(current, { 'r.io/app': [tag('a'), tag('b', { ownerReferences: [{ apiVersion: 'v', kind: 'ImagePullJob', name: 'j', uid: 'u' }] })] });
    expect(nodeImageSpecPatch(current, next)?.slice(0, 2)).toEqual([
      { op: 'test', path: '/metadata/generation', value: 3 },
      { op: 'test', path: '/status/imageStatuses/r.io~1app/tags/1', value: status('b', 'Pulling') },
    ]);
  });

  it('a removed tag with a status is guarded by that status', () => {
    const current = ni({ app: [tag('a')] }, { app: [status('a', 'Pulling')] });
    expect(nodeImageSpecPatch(current, withSpec(current, {}))).toEqual([
      { op: 'test', path: '/metadata/generation', value: 3 },
      { op: 'test', path: '/status/imageStatuses/app/tags/0', value: status('a', 'Pulling') },
      { op: 'add', path: '/spec', value: { images: {} } },
    ]);
  });

  it('leaves to a PUT: a changed tag the spec names without a status yet (its daemon may be reporting it now)', () => {
    const current = ni({ app: [tag('a')] });
    expect(nodeImageSpecPatch(current, withSpec(current, { app: [tag('a', { version: 1 })] }))).toBeUndefined();
  });

  it('leaves to a PUT: a change beyond the spec, or an object without a generation', () => {
    const current = ni({});
    const labelled: NodeImage = { ...withSpec(current, { app: [tag('a')] }), metadata: { ...current.metadata, labels: { x: 'y' } } };
    expect(nodeImageSpecPatch(current, labelled)).toBeUndefined();
    const bare = ni({}, {}, null);
    expect(nodeImageSpecPatch(bare, withSpec(bare, { app: [tag('a')] }))).toBeUndefined();
  });
});
