import { API_VERSION_V1BETA1 } from '../../api/group-version.js';
import { MESSAGE_PROGRESS_UNKNOWN } from '../../api/messages.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { ImageTagSpec, ImageTagStatus, NodeImage } from '../../api/types/nodeimage.js';
import { applyJobTag, releaseJobTag } from '../../manager/imagepulljob/desired.js';
import { nodeView, planJob, type NodeView } from '../../manager/imagepulljob/status.js';
import { jobTarget, parallelismOf, tagPullPolicy, type JobTarget } from '../../manager/imagepulljob/target.js';

const T0 = Date.parse('2024-05-01T10:00:00Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const SECRET = { namespace: 'kruise-ts-daemon-config', name: 'cred-0123456789' };

function job(over: Partial<ImagePullJob['spec']> = {}, status?: ImagePullJob['status']): ImagePullJob {
  return {
    metadata: { name: 'j', namespace: 'ns', uid: 'uid-j' },
    spec: { image: 'nginx:1.25', completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 }, imagePullPolicy: 'IfNotPresent', ...over },
    ...(status ? { status } : {}),
  };
}
function target(j: ImagePullJob = job(), secrets = [SECRET]): JobTarget {
  const t = jobTarget(j, secrets, API_VERSION_V1BETA1);
  if ('invalid' in t) throw new Error(t.invalid);
  return t;
}
const other = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'ImagePullJob', name: 'k', namespace: 'ns', uid: 'uid-k' };
const mine = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'ImagePullJob', name: 'j', namespace: 'ns', uid: 'uid-j' };
function ni(name: string, images: NonNullable<NodeImage['spec']>['images'] = {}, statuses: Record<string, ImageTagStatus[]> = {}): NodeImage {
  return { metadata: { name }, spec: { images }, status: { desired: 0, imageStatuses: Object.fromEntries(Object.entries(statuses).map(([k, tags]) => [k, { tags }])) } };
}
const tag = (over: Partial<ImageTagSpec> = {}): ImageTagSpec => ({
  tag: '1.25',
  createdAt: at(-100),
  version: 0,
  ownerReferences: [mine],
  imagePullPolicy: 'IfNotPresent',
  pullPolicy: { timeoutSeconds: 600, backoffLimit: 3, ttlSecondsAfterFinished: 3000 },
  ...over,
});

describe('job target', () => {
  it('normalises the image to NodeImage key and tag, digests included', () => {
    expect(target(job({ image: 'nginx' }))).toMatchObject({ image: 'nginx', tag: 'latest' });
    expect(target(job({ image: 'docker.io/library/nginx:1.25' }))).toMatchObject({ image: 'nginx', tag: '1.25' });
    const d = `sha256:${'a'.repeat(64)}`;
    expect(target(job({ image: `ghcr.io/x/y:1@${d}` }))).toMatchObject({ image: 'ghcr.io/x/y', tag: d });
    expect(jobTarget(job({ image: 'Not Valid' }), [], API_VERSION_V1BETA1)).toEqual({ invalid: expect.stringContaining('invalid image reference') });
  });
  it('carries the ownerReference and imagePullPolicy', () => {
    expect(target()).toMatchObject({ key: 'ns/j', uid: 'uid-j', ownerRef: mine, imagePullPolicy: 'IfNotPresent', secretRefs: [SECRET] });
  });
  it('Always: deadline from the job; TTL = job TTL (else deadline, else timeout x retries) + 300 + jitter < 300', () => {
    const a = tagPullPolicy(target(job({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 1200, ttlSecondsAfterFinished: 60 } })), 'n1');
    expect(a).toMatchObject({ timeoutSeconds: 600, backoffLimit: 3, activeDeadlineSeconds: 1200 });
    expect(a.ttlSecondsAfterFinished).toBeGreaterThanOrEqual(360);
    expect(a.ttlSecondsAfterFinished).toBeLessThan(660);
    const b = tagPullPolicy(target(job({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 1200 } })), 'n1');
    expect(b.ttlSecondsAfterFinished).toBeGreaterThanOrEqual(1500);
    const c = tagPullPolicy(target(job({ pullPolicy: { timeoutSeconds: 100, backoffLimit: 2 } })), 'n1');
    expect(c).not.toHaveProperty('activeDeadlineSeconds');
    expect(c.ttlSecondsAfterFinished).toBeGreaterThanOrEqual(500);
    expect(c.ttlSecondsAfterFinished).toBeLessThan(800);
  });
  it('Never: the deadline covers every attempt (upstream: one timeout, #2071), at least 30 min; TTL about a day', () => {
    const n = tagPullPolicy(target(job({ completionPolicy: { type: 'Never' }, pullPolicy: { timeoutSeconds: 900, backoffLimit: 3 } })), 'n1');
    expect(n.activeDeadlineSeconds).toBe(3600);
    expect(tagPullPolicy(target(job({ completionPolicy: { type: 'Never' } , pullPolicy: { timeoutSeconds: 60, backoffLimit: 1 } })), 'n1').activeDeadlineSeconds).toBe(1800);
    expect(n.ttlSecondsAfterFinished).toBeGreaterThanOrEqual(86400 - 600);
    expect(n.ttlSecondsAfterFinished).toBeLessThan(86400 + 600);
  });
  it('Never: --never-repull-interval-seconds sets the TTL, spread by a tenth of it (at most 10 min)', () => {
    const never = job({ completionPolicy: { type: 'Never' } });
    const at = (seconds: number, node: string): number => {
      const t = jobTarget(never, [], API_VERSION_V1BETA1, { neverRepullSeconds: seconds });
      if ('invalid' in t) throw new Error(t.invalid);
      return tagPullPolicy(t, node).ttlSecondsAfterFinished ?? -1;
    };
    const ttls = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((n) => at(20, n));
    for (const ttl of ttls) expect(ttl).toBeGreaterThanOrEqual(18);
    for (const ttl of ttls) expect(ttl).toBeLessThan(22);
    expect(new Set(ttls).size).toBeGreaterThan(1);
    expect(at(10, 'a')).toBeGreaterThanOrEqual(9);
    expect(at(10, 'a')).toBeLessThan(11);
    expect(at(7 * 86400, 'a')).toBeGreaterThanOrEqual(7 * 86400 - 600);
    expect(at(7 * 86400, 'a')).toBeLessThan(7 * 86400 + 600);
  });
  it('jitters the TTL per node, the same on every call', () => {
    const t = target();
    expect(tagPullPolicy(t, 'n1')).toEqual(tagPullPolicy(t, 'n1'));
    const spread = new Set(['a', 'b', 'c', 'd', 'e', 'f'].map((n) => tagPullPolicy(t, n).ttlSecondsAfterFinished));
    expect(spread.size).toBeGreaterThan(1);
  });
  it('parallelism: default 1, numbers and integer strings, 0 pauses', () => {
    expect(parallelismOf(job())).toBe(1);
    expect(parallelismOf(job({ parallelism: 5 }))).toBe(5);
    expect(parallelismOf(job({ parallelism: '7' }))).toBe(7);
    expect(parallelismOf(job({ parallelism: 0 }))).toBe(0);
  });
});

describe('writing the job into a NodeImage', () => {
  const t = target();
  it('adds image, secret reference and a new tag at version 0', () => {
    const r = applyJobTag(ni('n1'), t, T0);
    if (typeof r !== 'object') throw new Error(String(r));
    expect(r.spec.images?.['nginx']).toEqual({
      pullSecrets: [SECRET],
      tags: [{ tag: '1.25', createdAt: at(0), pullPolicy: tagPullPolicy(t, 'n1'), ownerReferences: [mine], version: 0, imagePullPolicy: 'IfNotPresent' }],
    });
  });
  it('starts a new tag one version past a status left behind', () => {
    const r = applyJobTag(ni('n1', {}, { nginx: [{ tag: '1.25', phase: 'Succeeded', version: 4 }] }), t, T0);
    if (typeof r !== 'object') throw new Error(String(r));
    expect(r.spec.images?.['nginx']?.tags[0]?.version).toBe(5);
  });
  it('keeps other images and tags, sorted', () => {
    const r = applyJobTag(ni('n1', { redis: { tags: [tag({ tag: '7', ownerReferences: [other] })] }, nginx: { tags: [tag({ tag: '2.0', ownerReferences: [other] })] } }), t, T0);
    if (typeof r !== 'object') throw new Error(String(r));
    expect(r.spec.images?.['redis']?.tags.map((x) => x.tag)).toEqual(['7']);
    expect(r.spec.images?.['nginx']?.tags.map((x) => x.tag)).toEqual(['1.25', '2.0']);
  });
  it('writes nothing when the job is already there with its secrets', () => {
    expect(applyJobTag(ni('n1', { nginx: { pullSecrets: [SECRET], tags: [tag({ pullPolicy: tagPullPolicy(t, 'n1') })] } }), t, T0)).toBe('unchanged');
  });
  it('joins a round another job has running, without restarting it', () => {
    const n = ni('n1', { nginx: { pullSecrets: [SECRET], tags: [tag({ ownerReferences: [other], version: 2 })] } }, { nginx: [{ tag: '1.25', phase: 'Pulling', version: 2 }] });
    const r = applyJobTag(n, t, T0);
    if (typeof r !== 'object') throw new Error(String(r));
    expect(r.spec.images?.['nginx']?.tags[0]).toMatchObject({ version: 2, createdAt: at(-100), ownerReferences: [other, mine] });
  });
  it('starts a new round when joining a finished one (upstream bumps the version always)', () => {
    for (const phase of ['Succeeded', 'Failed'] as const) {
      const n = ni('n1', { nginx: { pullSecrets: [SECRET], tags: [tag({ ownerReferences: [other], version: 2, imagePullPolicy: 'Always' })] } }, { nginx: [{ tag: '1.25', phase, version: 2 }] });
      const r = applyJobTag(n, t, T0);
      if (typeof r !== 'object') throw new Error(String(r));
      expect(r.spec.images?.['nginx']?.tags[0]).toMatchObject({ version: 3, createdAt: at(0), ownerReferences: [other, mine], imagePullPolicy: 'IfNotPresent' });
    }
  });
  it('persists missing secret references on an owned tag and retries a round that did not succeed (upstream v1.8 dropped them)', () => {
    const failed = ni('n1', { nginx: { tags: [tag({ version: 1 })] } }, { nginx: [{ tag: '1.25', phase: 'Failed', version: 1 }] });
    const r = applyJobTag(failed, t, T0);
    if (typeof r !== 'object') throw new Error(String(r));
    expect(r.spec.images?.['nginx']).toMatchObject({ pullSecrets: [SECRET], tags: [{ version: 2, createdAt: at(0) }] });
    const ok = ni('n1', { nginx: { tags: [tag({ version: 1 })] } }, { nginx: [{ tag: '1.25', phase: 'Succeeded', version: 1 }] });
    const s = applyJobTag(ok, t, T0);
    if (typeof s !== 'object') throw new Error(String(s));
    expect(s.spec.images?.['nginx']).toMatchObject({ pullSecrets: [SECRET], tags: [{ version: 1, createdAt: at(-100) }] });
  });
  it('merges pull policies of a shared tag so no owner gets less (upstream: first owner wins, #2221)', () => {
    const big = target(job({ pullPolicy: { timeoutSeconds: 900, backoffLimit: 1 }, imagePullPolicy: 'Always' }), [SECRET]);
    const n = ni('n1', { nginx: { pullSecrets: [SECRET], tags: [tag({ ownerReferences: [other] })] } }, { nginx: [{ tag: '1.25', phase: 'Pulling', version: 0 }] });
    const r = applyJobTag(n, big, T0);
    if (typeof r !== 'object') throw new Error(String(r));
    expect(r.spec.images?.['nginx']?.tags[0]).toMatchObject({ version: 0, imagePullPolicy: 'Always', pullPolicy: { timeoutSeconds: 900, backoffLimit: 3, ttlSecondsAfterFinished: 3000 } });
  });
  it('raises the policy of its own tag after the job was edited, without a new round', () => {
    const edited = target(job({ pullPolicy: { timeoutSeconds: 1200, backoffLimit: 3 } }), [SECRET]);
    const n = ni('n1', { nginx: { pullSecrets: [SECRET], tags: [tag()] } }, { nginx: [{ tag: '1.25', phase: 'Succeeded', version: 0 }] });
    const r = applyJobTag(n, edited, T0);
    if (typeof r !== 'object') throw new Error(String(r));
    expect(r.spec.images?.['nginx']?.tags[0]).toMatchObject({ version: 0, pullPolicy: { timeoutSeconds: 1200 } });
  });
  it('lowers the policy of a tag it owns alone after an edit (upstream: edits change nothing, #2221)', () => {
    const edited = target(job({ pullPolicy: { timeoutSeconds: 60, backoffLimit: 0 } }), [SECRET]);
    const n = ni('n1', { nginx: { pullSecrets: [SECRET], tags: [tag({ imagePullPolicy: 'Always' })] } }, { nginx: [{ tag: '1.25', phase: 'Pulling', version: 0 }] });
    const r = applyJobTag(n, edited, T0);
    if (typeof r !== 'object') throw new Error(String(r));
    expect(r.spec.images?.['nginx']?.tags[0]).toMatchObject({ version: 0, imagePullPolicy: 'IfNotPresent', pullPolicy: tagPullPolicy(edited, 'n1') });
    expect(r.spec.images?.['nginx']?.tags[0]?.pullPolicy).toMatchObject({ timeoutSeconds: 60, backoffLimit: 0 });
  });
  it('never lowers a shared tag below what another owner asked for', () => {
    const edited = target(job({ pullPolicy: { timeoutSeconds: 60, backoffLimit: 0 } }), [SECRET]);
    const n = ni('n1', { nginx: { pullSecrets: [SECRET], tags: [tag({ ownerReferences: [other, mine] })] } }, { nginx: [{ tag: '1.25', phase: 'Pulling', version: 0 }] });
    expect(applyJobTag(n, edited, T0)).toBe('unchanged');
  });
  it('sets its sandboxConfig; a job without one leaves another job\'s in place (upstream clears it)', () => {
    const withBox = target(job({ sandboxConfig: { labels: { a: 'b' } } }), []);
    const n = ni('n1', { nginx: { tags: [], sandboxConfig: { labels: { x: 'y' } } } });
    const r = applyJobTag(n, withBox, T0);
    if (typeof r !== 'object') throw new Error(String(r));
    expect(r.spec.images?.['nginx']?.sandboxConfig).toEqual({ labels: { a: 'b' } });
    const s = applyJobTag(n, target(job(), []), T0);
    if (typeof s !== 'object') throw new Error(String(s));
    expect(s.spec.images?.['nginx']?.sandboxConfig).toEqual({ labels: { x: 'y' } });
  });
  it('refuses to add a 257th image, but still joins an image the full NodeImage has', () => {
    const images: NonNullable<NodeImage['spec']>['images'] = {};
    for (let i = 0; i < 256; i++) images[`img-${i}`] = { tags: [tag({ tag: '1', ownerReferences: [other] })] };
    expect(applyJobTag(ni('n1', images), t, T0)).toBe('full');
    images['nginx'] = images['img-0'] ?? { tags: [] };
    delete images['img-0'];
    expect(typeof applyJobTag(ni('n1', images), t, T0)).toBe('object');
  });
  it('takes the job off a node it left while its round runs; the last owner takes the tag, the last tag the image', () => {
    const running = ni('n1', { nginx: { tags: [tag({ ownerReferences: [other, mine] })] } });
    expect(releaseJobTag(running, t)?.images?.['nginx']?.tags[0]?.ownerReferences).toEqual([other]);
    const alone = ni('n1', { nginx: { tags: [tag()] }, redis: { tags: [tag({ tag: '7', ownerReferences: [other] })] } });
    expect(Object.keys(releaseJobTag(alone, t)?.images ?? {})).toEqual(['redis']);
    const finished = ni('n1', { nginx: { tags: [tag()] } }, { nginx: [{ tag: '1.25', phase: 'Succeeded', version: 0 }] });
    expect(releaseJobTag(finished, t)).toBeUndefined();
    expect(releaseJobTag(ni('n1', { nginx: { tags: [tag({ ownerReferences: [other] })] } }), t)).toBeUndefined();
  });
});

describe('the job on one node', () => {
  const t = target();
  const synced = (st?: ImageTagStatus, over: Partial<ImageTagSpec> = {}): NodeImage => ni('n1', { nginx: { pullSecrets: [SECRET], tags: [tag(over)] } }, st ? { nginx: [st] } : {});
  it('is unsynced without image, tag, ownership or secret reference', () => {
    expect(nodeView(ni('n1'), t).state).toBe('unsynced');
    expect(nodeView(synced(undefined, { tag: 'other' }), t).state).toBe('unsynced');
    expect(nodeView(synced(undefined, { ownerReferences: [other] }), t).state).toBe('unsynced');
    expect(nodeView(ni('n1', { nginx: { tags: [tag()] } }), t).state).toBe('unsynced');
  });
  it('is active until a status for the current version is final', () => {
    expect(nodeView(synced(), t).state).toBe('active');
    expect(nodeView(synced({ tag: '1.25', phase: 'Succeeded', version: 0 }, { version: 1 }), t).state).toBe('active');
    expect(nodeView(synced({ tag: '1.25', phase: 'Pulling', version: 0 }), t).state).toBe('active');
    expect(nodeView(synced({ tag: '1.25', phase: 'Waiting', version: 0 }), t).state).toBe('active');
    expect(nodeView(synced({ tag: '1.25', phase: 'Succeeded', version: 0 }), t).state).toBe('succeeded');
    expect(nodeView(synced({ tag: '1.25', phase: 'Failed', version: 0 }), t).state).toBe('failed');
  });
  it('carries the byte progress of a pull in flight, unless the daemon says it cannot know it', () => {
    expect(nodeView(synced({ tag: '1.25', phase: 'Pulling', version: 0, progress: 40 }), t)).toMatchObject({ state: 'active', progress: 40 });
    expect(nodeView(synced({ tag: '1.25', phase: 'Pulling', version: 0, progress: 0, message: `${MESSAGE_PROGRESS_UNKNOWN}: x` }), t).progress).toBeUndefined();
    expect(nodeView(synced({ tag: '1.25', phase: 'Waiting', version: 0, progress: 40 }), t).progress).toBeUndefined();
    expect(nodeView(synced({ tag: '1.25', phase: 'Pulling', version: 0, progress: 40 }, { version: 1 }), t).progress).toBeUndefined();
  });
  it('is full when the image is missing from a NodeImage with 256 images', () => {
    const images: NonNullable<NodeImage['spec']>['images'] = {};
    for (let i = 0; i < 256; i++) images[`img-${i}`] = { tags: [] };
    expect(nodeView(ni('n1', images), t).state).toBe('full');
  });
  it('is stale when its own tag differs from what the job asks, or a shared one gives less', () => {
    const own = tagPullPolicy(t, 'n1');
    expect(nodeView(synced(undefined, { pullPolicy: own }), t)).toMatchObject({ state: 'active', stale: false });
    expect(nodeView(synced(undefined, { pullPolicy: { ...own, timeoutSeconds: 10 } }), t).stale).toBe(true);
    expect(nodeView(synced(undefined, { pullPolicy: { ...own, backoffLimit: 9 } }), t).stale).toBe(true);
    expect(nodeView(synced(undefined, { pullPolicy: own, imagePullPolicy: 'Always' }), t).stale).toBe(true);
    const shared = { ownerReferences: [other, mine] };
    expect(nodeView(synced(undefined, { ...shared, pullPolicy: { timeoutSeconds: 10, backoffLimit: 3 } }), t).stale).toBe(true);
    expect(nodeView(synced(undefined, { ...shared, pullPolicy: { ...own, backoffLimit: 9 }, imagePullPolicy: 'Always' }), t).stale).toBe(false);
  });
});

describe('job plan and status', () => {
  const v = (name: string, state: NodeView['state']): NodeView => ({ name, state, stale: false });
  const always = (over: Partial<ImagePullJob['spec']> = {}, status?: ImagePullJob['status']): ImagePullJob => job({ completionPolicy: { type: 'Always' }, ...over }, status);
  it('dispatches at most parallelism minus active, in order, counting dispatches as active', () => {
    const p = planJob(always({ parallelism: 3 }), [v('a', 'active'), v('b', 'unsynced'), v('c', 'succeeded'), v('d', 'unsynced'), v('e', 'unsynced')], 3, T0);
    expect(p.dispatch).toEqual(['b', 'd']);
    expect(p.status).toEqual({ startTime: at(0), desired: 5, active: 3, succeeded: 1, failed: 0, message: 'job is running, progress 20.0%' });
    expect(p.completed).toBe(false);
  });
  it('dispatches at most maxDispatch in one plan, counts only those as active, and says there is more', () => {
    const nodes = [v('a', 'active'), v('b', 'unsynced'), v('c', 'unsynced'), v('d', 'unsynced'), v('e', 'succeeded')];
    const p = planJob(always({ parallelism: 10 }), nodes, 10, T0, 2);
    expect(p.dispatch).toEqual(['b', 'c']);
    expect(p.more).toBe(true);
    expect(p.status).toMatchObject({ desired: 5, active: 3, succeeded: 1 });
    expect(p.completed).toBe(false);
    // Parallelism, not the cap, is what holds the rest back: nothing more to start now.
    expect(planJob(always({ parallelism: 3 }), nodes, 3, T0, 2).more).toBe(false);
    expect(planJob(always({ parallelism: 10 }), nodes, 10, T0, 3).more).toBe(false);
    expect(planJob(always({ parallelism: 10 }), nodes, 10, T0).dispatch).toEqual(['b', 'c', 'd']);
  });
  it('dispatches nothing at parallelism 0 or when active fills it', () => {
    expect(planJob(always(), [v('a', 'unsynced')], 0, T0).dispatch).toEqual([]);
    expect(planJob(always(), [v('a', 'active'), v('b', 'active'), v('c', 'unsynced')], 2, T0).dispatch).toEqual([]);
  });
  it('completes an Always job when every node finished, listing failed nodes sorted', () => {
    const p = planJob(always({}, { desired: 3, startTime: at(-50) }), [v('c', 'failed'), v('a', 'succeeded'), v('b', 'failed')], 1, T0);
    expect(p.status).toEqual({ startTime: at(-50), completionTime: at(0), desired: 3, active: 0, succeeded: 1, failed: 2, failedNodes: ['b', 'c'], message: 'job has completed' });
    expect(p.completed).toBe(true);
  });
  it('counts full NodeImages as failed nodes', () => {
    const p = planJob(always(), [v('a', 'full'), v('b', 'succeeded')], 1, T0);
    expect(p.status).toMatchObject({ failed: 1, failedNodes: ['a'], completionTime: at(0) });
    expect(p.full).toEqual(['a']);
  });
  it('waits for a named node without a NodeImage as long as an empty job, then counts it failed and names it', () => {
    const early = planJob(always({}, { desired: 2, startTime: at(-10) }), [v('node-1', 'succeeded'), v('node-2', 'missing')], 1, T0);
    expect(early.completed).toBe(false);
    expect(early.requeueAfterMs).toBe(50_000);
    expect(early.status).toEqual({ startTime: at(-10), desired: 2, active: 0, succeeded: 1, failed: 0, message: 'job is running, progress 50.0%; no such node: node-2' });
    const late = planJob(always({}, { desired: 2, startTime: at(-60) }), [v('node-1', 'succeeded'), v('node-2', 'missing')], 1, T0);
    expect(late.completed).toBe(true);
    expect(late.missing).toEqual(['node-2']);
    expect(late.status).toEqual({ startTime: at(-60), completionTime: at(0), desired: 2, active: 0, succeeded: 1, failed: 1, failedNodes: ['node-2'], message: 'job has completed; no such node: node-2' });
  });
  it('never completes a Never job', () => {
    const p = planJob(job({ completionPolicy: { type: 'Never' } }), [v('a', 'succeeded')], 1, T0);
    expect(p.completed).toBe(false);
    expect(p.status.message).toBe('job is running, progress 100.0%');
    expect(p.requeueAfterMs).toBeUndefined();
  });
  it('fails every unfinished node once the deadline passed, and stops dispatching', () => {
    const j = always({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 60 } }, { desired: 4, startTime: at(-60) });
    const p = planJob(j, [v('d', 'unsynced'), v('a', 'succeeded'), v('c', 'active'), v('b', 'failed')], 5, T0);
    expect(p).toMatchObject({ dispatch: [], completed: true, deadlineExceeded: true });
    expect(p.status).toEqual({ startTime: at(-60), completionTime: at(0), desired: 4, active: 0, succeeded: 1, failed: 3, failedNodes: ['b', 'c', 'd'], message: 'job exceeds activeDeadlineSeconds' });
  });
  it('asks to look again at the deadline', () => {
    const j = always({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 60 } }, { desired: 1, startTime: at(-20) });
    expect(planJob(j, [v('a', 'active')], 1, T0).requeueAfterMs).toBe(40_000);
  });
  it('waits a grace period before completing a job that matches no node (upstream completes at once)', () => {
    const p = planJob(always({}, { desired: 0, startTime: at(-10) }), [], 1, T0);
    expect(p).toMatchObject({ completed: false, requeueAfterMs: 50_000 });
    expect(p.status).toEqual({ startTime: at(-10), desired: 0, active: 0, succeeded: 0, failed: 0, message: 'job is running, no progress' });
    expect(planJob(always({}, { desired: 0, startTime: at(-60) }), [], 1, T0)).toMatchObject({ completed: true, status: { message: 'job has completed' } });
  });
  it('counts the bytes of nodes still pulling in the progress message; finished nodes count in full', () => {
    const nodes: NodeView[] = [v('a', 'succeeded'), { name: 'b', state: 'active', stale: false, progress: 50 }, { name: 'c', state: 'active', stale: false, progress: 30 }, v('d', 'unsynced')];
    // (100 + 50 + 30 + 0) / 4; upstream's count of finished nodes says 25.0%.
    expect(planJob(always(), nodes, 2, T0).status.message).toBe('job is running, progress 45.0%');
    expect(planJob(always(), nodes.map((n) => ({ name: n.name, state: n.state, stale: false })), 2, T0).status.message).toBe('job is running, progress 25.0%');
  });
  it('keeps the start time it wrote first', () => {
    expect(planJob(always({}, { desired: 1, startTime: at(-99) }), [v('a', 'active')], 1, T0).status.startTime).toBe(at(-99));
  });
  it('refreshes stale nodes without taking a slot', () => {
    const p = planJob(always(), [{ name: 'a', state: 'active', stale: true }, v('b', 'unsynced')], 1, T0);
    expect(p).toMatchObject({ refresh: ['a'], dispatch: [] });
  });
});
