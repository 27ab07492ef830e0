import { API_VERSION_V1BETA1 } from '../../api/group-version.js';
import type { ImageListPullJob } from '../../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import { childName, newChild, planChildren, templateHash, templateOf } from '../../manager/imagelistpulljob/desired.js';
import { listStatus } from '../../manager/imagelistpulljob/status.js';

const T0 = Date.parse('2024-05-01T10:00:00Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
function list(images: string[], over: Partial<ImageListPullJob['spec']> = {}, status?: ImageListPullJob['status']): ImageListPullJob {
  return {
    metadata: { name: 'warm', namespace: 'ns', uid: 'list-uid' },
    spec: { images, completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 300, backoffLimit: 1 }, parallelism: 2, ...over },
    ...(status ? { status } : {}),
  };
}
function child(l: ImageListPullJob, image: string, status?: ImagePullJob['status'], hash = templateHash(templateOf(l))): ImagePullJob {
  return { ...newChild(l, image, hash, API_VERSION_V1BETA1), ...(status ? { status } : {}) };
}

describe('ImageListPullJob children', () => {
  it('hashes templates by content, whatever the key order, in the safe alphabet', () => {
    const a = templateHash({ completionPolicy: { type: 'Always' }, parallelism: 2 });
    expect(templateHash({ parallelism: 2, completionPolicy: { type: 'Always' } })).toBe(a);
    expect(templateHash({ parallelism: 3, completionPolicy: { type: 'Always' } })).not.toBe(a);
    expect(a).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
  });
  it('makes one child per image from the template, controlled by the list', () => {
    const l = list(['nginx:1', 'redis:7']);
    const p = planChildren(l, [], API_VERSION_V1BETA1);
    expect(p.create.map((c) => c.spec.image)).toEqual(['nginx:1', 'redis:7']);
    expect(p.create[0]).toEqual({
      metadata: {
        name: childName(l, 'nginx:1', p.hash),
        namespace: 'ns',
        labels: { 'controller-revision-hash': p.hash },
        ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'ImageListPullJob', name: 'warm', uid: 'list-uid', controller: true, blockOwnerDeletion: true }],
      },
      spec: { image: 'nginx:1', completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 300, backoffLimit: 1 }, parallelism: 2 },
    });
    expect(childName(l, 'nginx:1', p.hash)).toMatch(/^warm-[0-9a-f]{10}$/);
  });
  it('keeps current children, adds missing images, deletes children of removed images', () => {
    const l = list(['nginx:1', 'redis:7']);
    const keep = child(l, 'nginx:1');
    const old = child(list(['gone:1']), 'gone:1');
    const p = planChildren(l, [keep, old], API_VERSION_V1BETA1);
    expect(p.current.get('nginx:1')).toBe(keep);
    expect(p.create.map((c) => c.spec.image)).toEqual(['redis:7']);
    expect(p.delete).toEqual([old]);
  });
  it('replaces children made from an older template', () => {
    const before = list(['nginx:1']);
    const after = list(['nginx:1'], { parallelism: 5 });
    const stale = child(before, 'nginx:1');
    const p = planChildren(after, [stale], API_VERSION_V1BETA1);
    expect(p.delete).toEqual([stale]);
    expect(p.create).toHaveLength(1);
    expect(p.create[0]?.metadata?.name).not.toBe(stale.metadata?.name);
  });
  it('ignores children being deleted, and deletes duplicates', () => {
    const l = list(['nginx:1']);
    const going = { ...child(l, 'nginx:1'), metadata: { ...child(l, 'nginx:1').metadata, deletionTimestamp: new Date().toISOString() } };
    expect(planChildren(l, [going], API_VERSION_V1BETA1).create).toHaveLength(1);
    const a = child(l, 'nginx:1');
    const dup = { ...child(l, 'nginx:1'), metadata: { ...a.metadata, name: 'warm-other' } };
    const p = planChildren(l, [dup, a], API_VERSION_V1BETA1);
    expect(p.current.get('nginx:1')).toBe(a);
    expect(p.delete).toEqual([dup]);
  });
});

describe('ImageListPullJob status', () => {
  const l = list(['a:1', 'b:1', 'c:1']);
  const running = { startTime: at(-5), desired: 2, active: 1, succeeded: 1, failed: 0 };
  it('counts active, completed and succeeded children, skipping those not started', () => {
    const children = new Map([
      ['a:1', child(l, 'a:1', { ...running })],
      ['b:1', child(l, 'b:1', { startTime: at(-5), completionTime: at(-1), desired: 2, active: 0, succeeded: 2, failed: 0 })],
      ['c:1', child(l, 'c:1', { desired: 0 })],
    ]);
    expect(listStatus(l, children, T0)).toEqual({ startTime: at(0), desired: 3, active: 1, completed: 1, succeeded: 1 });
  });
  it('lists children with failed nodes and completes when every child did', () => {
    const done = (failed: number) => ({ startTime: at(-5), completionTime: at(-1), desired: 2, active: 0, succeeded: 2 - failed, failed });
    const children = new Map([
      ['c:1', child(l, 'c:1', done(1))],
      ['a:1', child(l, 'a:1', done(0))],
      ['b:1', child(l, 'b:1', done(2))],
    ]);
    const s = listStatus({ ...l, status: { desired: 3, startTime: at(-9) } }, children, T0);
    expect(s).toMatchObject({ startTime: at(-9), completionTime: at(0), desired: 3, completed: 3, succeeded: 1 });
    expect(s.failedImageStatuses?.map((f) => f.name)).toEqual(['b:1', 'c:1']);
    expect(s.failedImageStatuses?.[0]?.message).toBe(`Please check for details which nodes failed by 'kubectl get ImagePullJob ${children.get('b:1')?.metadata?.name ?? ''}'.`);
  });
  it('never completes a Never list; its children finish when every node did', () => {
    const never = list(['a:1'], { completionPolicy: { type: 'Never' } });
    const s = listStatus(never, new Map([['a:1', child(never, 'a:1', { startTime: at(-5), desired: 2, active: 0, succeeded: 2, failed: 0 })]]), T0);
    expect(s).toEqual({ startTime: at(0), desired: 1, active: 0, completed: 1, succeeded: 1 });
  });
});
