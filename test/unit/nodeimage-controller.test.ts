import type { Node, ObjectReference } from '../../api/types/core.js';
import type { ImageTagSpec, ImageTagStatus, NodeImage } from '../../api/types/nodeimage.js';
import { cleanSpec, lifecycle, readiness, type SpecLookups } from '../../manager/nodeimage/desired.js';
import { timeoutStatus } from '../../manager/nodeimage/status.js';

const T0 = Date.parse('2024-05-01T10:00:00Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const job = (name: string, uid = `uid-${name}`): ObjectReference => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', name, namespace: 'ns', uid });
const tag = (t: string, over: Partial<ImageTagSpec> = {}): ImageTagSpec => ({
  tag: t,
  createdAt: at(0),
  version: 0,
  pullPolicy: { timeoutSeconds: 600, backoffLimit: 3, ttlSecondsAfterFinished: 300 },
  ownerReferences: [job('a')],
  ...over,
});
const st = (t: string, phase: ImageTagStatus['phase'], over: Partial<ImageTagStatus> = {}): ImageTagStatus => ({ tag: t, phase, version: 0, ...over });
function ni(images: Record<string, ImageTagSpec[]>, statuses: Record<string, ImageTagStatus[]> = {}, labels: Record<string, string> = { zone: 'a' }): NodeImage {
  return {
    metadata: { name: 'n1', labels, uid: 'ni-uid' },
    spec: { images: Object.fromEntries(Object.entries(images).map(([k, tags]) => [k, { tags }])) },
    status: {
      desired: Object.values(images).flat().length,
      imageStatuses: Object.fromEntries(Object.entries(statuses).map(([k, tags]) => [k, { tags }])),
    },
  };
}
const node = (over: { labels?: Record<string, string>; ready?: 'True' | 'False' | 'Unknown'; since?: number; deleting?: boolean; virtual?: boolean } = {}): Node => ({
  metadata: {
    name: 'n1',
    labels: { ...(over.labels ?? { zone: 'a' }), ...(over.virtual ? { type: 'virtual-kubelet' } : {}) },
    ...(over.deleting ? { deletionTimestamp: new Date(T0).toISOString() } : {}),
  },
  status: over.ready ? { conditions: [{ type: 'Ready', status: over.ready, lastTransitionTime: new Date(T0 + (over.since ?? 0) * 1000).toISOString() }] } : {},
});
const alive: SpecLookups = { owner: () => 'alive', secret: () => 'present' };
const gone = (...uids: string[]): SpecLookups => ({ owner: (r) => (uids.includes(r.uid ?? '') ? 'gone' : 'alive'), secret: () => 'present' });

describe('NodeImage lifecycle', () => {
  it('creates once the Node has been Ready for the creation delay, with its labels', () => {
    expect(lifecycle(node({ ready: 'True', since: 0 }), undefined, T0 + 30_000, 30)).toEqual({ action: 'create', labels: { zone: 'a' } });
  });
  it('waits for the rest of the delay when the Node became Ready recently', () => {
    expect(lifecycle(node({ ready: 'True', since: 0 }), undefined, T0 + 10_000, 30)).toEqual({ action: 'wait', afterMs: 20_000 });
  });
  it('does nothing for a Node that is not Ready, or virtual-kubelet', () => {
    expect(lifecycle(node({ ready: 'False' }), undefined, T0 + 99_000, 30)).toEqual({ action: 'none' });
    expect(lifecycle(node({ labels: {} }), undefined, T0, 30)).toEqual({ action: 'none' });
    expect(lifecycle(node({ ready: 'True', virtual: true }), undefined, T0 + 99_000, 30)).toEqual({ action: 'none' });
  });
  it('deletes the NodeImage of a Node that is gone or going, unless it is fake', () => {
    const n = ni({});
    expect(lifecycle(undefined, n, T0, 30)).toEqual({ action: 'delete' });
    expect(lifecycle(node({ ready: 'True', deleting: true }), n, T0, 30)).toEqual({ action: 'delete' });
    expect(lifecycle(undefined, ni({}, {}, { 'apps.kruise.io/fake-nodeimage': 'true' }), T0, 30)).toEqual({ action: 'sync' });
    expect(lifecycle(undefined, { ...n, metadata: { ...n.metadata, deletionTimestamp: new Date(T0).toISOString() } }, T0, 30)).toEqual({ action: 'none' });
    expect(lifecycle(undefined, undefined, T0, 30)).toEqual({ action: 'none' });
  });
  it('syncs an existing NodeImage of a live Node, Ready or not', () => {
    expect(lifecycle(node({ ready: 'False' }), ni({}), T0, 30)).toEqual({ action: 'sync' });
  });
  it('reads readiness from the Ready condition', () => {
    expect(readiness(node({ ready: 'False', since: 5 }))).toEqual({ ready: false, sinceMs: T0 + 5000 });
    expect(readiness(node())).toBeUndefined();
    expect(readiness(undefined)).toBeUndefined();
  });
});

describe('NodeImage spec pass', () => {
  it('changes nothing when everything is in order', () => {
    const n = ni({ nginx: [tag('1.0')] }, { nginx: [st('1.0', 'Pulling')] });
    const r = cleanSpec(n, { zone: 'a' }, alive, T0);
    expect(r.changed).toBe(false);
    expect(r.removed).toEqual([]);
    expect(r.labels).toBeUndefined();
  });
  it('mirrors the Node labels', () => {
    const r = cleanSpec(ni({}), { zone: 'b', extra: 'x' }, alive, T0);
    expect(r).toMatchObject({ changed: true, labels: { zone: 'b', extra: 'x' } });
  });
  it('leaves labels alone when there is no Node (fake NodeImage)', () => {
    expect(cleanSpec(ni({}), undefined, alive, T0).changed).toBe(false);
  });
  it('drops a tag without createdAt', () => {
    const { createdAt: _c, ...noTime } = tag('1.0');
    const r = cleanSpec(ni({ nginx: [noTime as ImageTagSpec, tag('1.1')] }), undefined, alive, T0);
    expect(r.spec.images?.['nginx']?.tags.map((t) => t.tag)).toEqual(['1.1']);
    expect(r.removed).toEqual([{ image: 'nginx', tag: '1.0', why: 'no createdAt' }]);
  });
  it('drops owners whose job is gone, and the tag with its last owner; keeps partial owners', () => {
    const n = ni({ nginx: [tag('1.0', { ownerReferences: [job('a'), job('b')] }), tag('1.1', { ownerReferences: [job('a')] })] });
    const r = cleanSpec(n, undefined, gone('uid-a'), T0);
    expect(r.spec.images?.['nginx']?.tags).toEqual([tag('1.0', { ownerReferences: [job('b')] })]);
    expect(r.removed).toEqual([{ image: 'nginx', tag: '1.1', why: 'owners gone' }]);
  });
  it('keeps owners of other kinds, and tags that never had owners', () => {
    const other: ObjectReference = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'uid-a' };
    const n = ni({ nginx: [tag('1.0', { ownerReferences: [other] }), tag('1.1', { ownerReferences: [] })] });
    expect(cleanSpec(n, undefined, gone('uid-a'), T0).changed).toBe(false);
  });
  it('drops an image whose last tag went, keeps other images', () => {
    const n = ni({ nginx: [tag('1.0')], redis: [tag('7', { ownerReferences: [job('b')] })] });
    const r = cleanSpec(n, undefined, gone('uid-a'), T0);
    expect(Object.keys(r.spec.images ?? {})).toEqual(['redis']);
  });
  it('leaves an empty spec when every image went', () => {
    const r = cleanSpec(ni({ nginx: [tag('1.0')] }), undefined, gone('uid-a'), T0);
    expect(r.spec).toEqual({});
    expect(r.changed).toBe(true);
  });
  it('drops a finished tag once its TTL passed, measured from completion of the same version', () => {
    const done = ni({ nginx: [tag('1.0')] }, { nginx: [st('1.0', 'Succeeded', { completionTime: at(100) })] });
    expect(cleanSpec(done, undefined, alive, T0 + 400_000).removed).toEqual([{ image: 'nginx', tag: '1.0', why: 'ttl expired' }]);
    expect(cleanSpec(done, undefined, alive, T0 + 399_000)).toMatchObject({ changed: false, requeueAfterMs: 1000 });
  });
  it('holds a finished tag past its TTL while an Always job owning it runs, drops it once that job completed', () => {
    const done = ni({ nginx: [tag('1.0', { ownerReferences: [job('a'), job('b')] })] }, { nginx: [st('1.0', 'Succeeded', { completionTime: at(100) })] });
    const running = (uid: string): SpecLookups => ({ owner: (r) => (r.uid === uid ? 'running' : 'alive'), secret: () => 'present' });
    const r = cleanSpec(done, undefined, running('uid-b'), T0 + 10_000_000);
    expect(r).toMatchObject({ changed: false, removed: [] });
    // No timer: the job's completion brings the NodeImage back.
    expect(r.requeueAfterMs).toBeUndefined();
    expect(cleanSpec(done, undefined, alive, T0 + 10_000_000).removed).toEqual([{ image: 'nginx', tag: '1.0', why: 'ttl expired' }]);
  });
  it('ignores a completion of an older version for the TTL', () => {
    const n = ni({ nginx: [tag('1.0', { version: 2 })] }, { nginx: [st('1.0', 'Succeeded', { version: 1, completionTime: at(0) })] });
    const r = cleanSpec(n, undefined, alive, T0 + 10_000_000);
    expect(r.changed).toBe(false);
    expect(r.requeueAfterMs).toBeUndefined();
  });
  it('keeps the earliest TTL timer over several images', () => {
    const n = ni(
      { a: [tag('1', { pullPolicy: { ttlSecondsAfterFinished: 50 } })], b: [tag('2', { pullPolicy: { ttlSecondsAfterFinished: 10 } })] },
      { a: [st('1', 'Failed', { completionTime: at(0) })], b: [st('2', 'Succeeded', { completionTime: at(0) })] },
    );
    expect(cleanSpec(n, undefined, alive, T0 + 5000).requeueAfterMs).toBe(5000);
  });
  it('removes references to pull secrets that are gone, keeps unknown ones', () => {
    const n = ni({ nginx: [tag('1.0')] });
    n.spec = { images: { nginx: { tags: [tag('1.0')], pullSecrets: [{ namespace: 'cfg', name: 'gone' }, { namespace: 'cfg', name: 'here' }, { namespace: 'x', name: 'maybe' }] } } };
    const lookups: SpecLookups = { owner: () => 'alive', secret: (r) => (r.name === 'gone' ? 'gone' : r.name === 'here' ? 'present' : 'unknown') };
    const r = cleanSpec(n, undefined, lookups, T0);
    expect(r.spec.images?.['nginx']?.pullSecrets).toEqual([{ namespace: 'cfg', name: 'here' }, { namespace: 'x', name: 'maybe' }]);
    const allGone = cleanSpec(n, undefined, { owner: () => 'alive', secret: () => 'gone' }, T0);
    expect(allGone.spec.images?.['nginx']).not.toHaveProperty('pullSecrets');
  });
  it('sorts tags', () => {
    const r = cleanSpec(ni({ nginx: [tag('2.0'), tag('1.0'), tag('1.1', { ownerReferences: [job('x')] })] }), undefined, gone('uid-x'), T0);
    expect(r.spec.images?.['nginx']?.tags.map((t) => t.tag)).toEqual(['1.0', '2.0']);
  });
});

describe('NodeImage status pass', () => {
  const ready = { ready: true, sinceMs: T0 - 1000 };
  it('fails a tag the node never answered after 10 minutes, and says when to look otherwise', () => {
    const n = ni({ nginx: [tag('1.0')] });
    expect(timeoutStatus(n, ready, T0 + 599_000)).toEqual({ failed: [], requeueAfterMs: 1000 });
    const r = timeoutStatus(n, ready, T0 + 600_000);
    expect(r.failed).toEqual([{ image: 'nginx', tag: '1.0', message: 'node has not responded for a long time', owners: [job('a')] }]);
    expect(r.status).toEqual({
      desired: 1,
      succeeded: 0,
      failed: 1,
      pulling: 0,
      waiting: 0,
      imageStatuses: { nginx: { tags: [{ tag: '1.0', phase: 'Failed', version: 0, completionTime: at(600), message: 'node has not responded for a long time' }] } },
    });
  });
  it('fails early on a Node that was already not Ready when the tag was written', () => {
    const n = ni({ nginx: [tag('1.0')] });
    expect(timeoutStatus(n, { ready: false, sinceMs: T0 - 5000 }, T0 + 60_000).failed).toHaveLength(1);
    // Became not Ready after the tag was written: it may come back, the normal timeout applies.
    expect(timeoutStatus(n, { ready: false, sinceMs: T0 + 5000 }, T0 + 60_000).failed).toHaveLength(0);
    expect(timeoutStatus(n, undefined, T0 + 60_000).failed).toHaveLength(0);
  });
  it('counts a status of another version as no answer', () => {
    const n = ni({ nginx: [tag('1.0', { version: 1 })] }, { nginx: [st('1.0', 'Succeeded', { version: 0 })] });
    expect(timeoutStatus(n, ready, T0 + 600_000).status?.imageStatuses?.['nginx']?.tags[0]).toMatchObject({ phase: 'Failed', version: 1 });
  });
  it('fails a pull running past createdAt + activeDeadlineSeconds + 10 minutes, keeping its start time', () => {
    const n = ni({ nginx: [tag('1.0', { pullPolicy: { ttlSecondsAfterFinished: 1, activeDeadlineSeconds: 60 } })] }, { nginx: [st('1.0', 'Pulling', { startTime: at(1), progress: 40 })] });
    expect(timeoutStatus(n, ready, T0 + 659_000)).toEqual({ failed: [], requeueAfterMs: 1000 });
    const r = timeoutStatus(n, ready, T0 + 660_000);
    expect(r.status?.imageStatuses?.['nginx']?.tags[0]).toEqual({ tag: '1.0', phase: 'Failed', version: 0, progress: 40, startTime: at(1), completionTime: at(660), message: 'pulling exceeds the activeDeadlineSeconds' });
    expect(r.status).toMatchObject({ pulling: 0, failed: 1 });
  });
  it('leaves finished tags and running tags without a deadline alone', () => {
    const n = ni({ a: [tag('1')], b: [tag('2')] }, { a: [st('1', 'Succeeded')], b: [st('2', 'Pulling')] });
    expect(timeoutStatus(n, ready, T0 + 99_999_000)).toEqual({ failed: [] });
  });
  it('drops status entries of tags no longer in the spec when it writes, and recounts', () => {
    const n = ni({ a: [tag('1'), tag('2')] }, { a: [st('1', 'Succeeded'), st('9', 'Failed')], gone: [st('x', 'Waiting')] });
    n.status = { ...n.status, desired: 3, firstSyncStatus: { status: 'Succeeded' } };
    const r = timeoutStatus(n, ready, T0 + 600_000);
    expect(r.status).toEqual({
      firstSyncStatus: { status: 'Succeeded' },
      desired: 2,
      succeeded: 1,
      failed: 1,
      pulling: 0,
      waiting: 0,
      imageStatuses: { a: { tags: [st('1', 'Succeeded'), { tag: '2', phase: 'Failed', version: 0, completionTime: at(600), message: 'node has not responded for a long time' }] } },
    });
  });
});
