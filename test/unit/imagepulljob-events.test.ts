import type { Pod } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { ImageTagSpec, ImageTagStatus, NodeImage } from '../../api/types/nodeimage.js';
import { isActivePod, podSelects, selectNodes, selectsNodeImage, type NodeSource } from '../../manager/imagepulljob/nodes.js';
import { gainedRoom, ownersToWake, progressOwners } from '../../manager/imagepulljob/wake.js';

const owner = (name: string) => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', name, namespace: 'ns', uid: `uid-${name}` });
const tag = (t: string, owners: string[], over: Partial<ImageTagSpec> = {}): ImageTagSpec => ({ tag: t, version: 0, createdAt: '2024-01-01T00:00:00Z', ownerReferences: owners.map(owner), ...over });
function ni(name: string, labels: Record<string, string>, images: Record<string, ImageTagSpec[]> = {}, statuses: Record<string, ImageTagStatus[]> = {}): NodeImage {
  return {
    metadata: { name, labels },
    spec: { images: Object.fromEntries(Object.entries(images).map(([k, tags]) => [k, { tags }])) },
    status: { desired: 0, imageStatuses: Object.fromEntries(Object.entries(statuses).map(([k, tags]) => [k, { tags }])) },
  };
}
const withStatus = (n: NodeImage, image: string, s: ImageTagStatus[]): NodeImage => ({ ...n, status: { desired: 0, imageStatuses: { ...(n.status?.imageStatuses ?? {}), [image]: { tags: s } } } });

describe('which jobs a NodeImage change wakes', () => {
  const base = ni('n1', {}, { nginx: [tag('1', ['a']), tag('2', ['b'])], redis: [tag('7', ['c'])] }, { nginx: [{ tag: '1', phase: 'Pulling', version: 0, progress: 10 }] });
  it('wakes only the owners of a tag whose status phase changed', () => {
    const b = withStatus(base, 'nginx', [{ tag: '1', phase: 'Succeeded', version: 0, progress: 100 }]);
    expect([...ownersToWake(base, b)]).toEqual(['ns/a']);
  });
  it('wakes no one for progress or timestamps alone', () => {
    const b = withStatus(base, 'nginx', [{ tag: '1', phase: 'Pulling', version: 0, progress: 60, startTime: '2024-01-01T00:00:01Z' }]);
    expect(ownersToWake(base, b).size).toBe(0);
    expect(ownersToWake(base, structuredClone(base)).size).toBe(0);
  });
  it('names the owners of a tag whose byte progress moved, for the coalesced progress wake', () => {
    const b = withStatus(base, 'nginx', [{ tag: '1', phase: 'Pulling', version: 0, progress: 60 }]);
    expect([...progressOwners(base, b)]).toEqual(['ns/a']);
    expect(progressOwners(base, withStatus(base, 'nginx', [{ tag: '1', phase: 'Pulling', version: 0, progress: 10, startTime: '2024-01-01T00:00:01Z' }])).size).toBe(0);
    expect([...progressOwners(base, withStatus(base, 'nginx', [{ tag: '1', phase: 'Pulling', version: 0, progress: 10 }, { tag: '2', phase: 'Pulling', version: 0, progress: 5 }]))]).toEqual(['ns/b']);
  });
  it('wakes old and new owners when a tag is joined, left, added or removed', () => {
    const joined = ni('n1', {}, { nginx: [tag('1', ['a', 'd']), tag('2', ['b'])], redis: [tag('7', ['c'])] }, base.status?.imageStatuses ? { nginx: base.status.imageStatuses['nginx']?.tags ?? [] } : {});
    expect([...ownersToWake(base, joined)].sort()).toEqual(['ns/a', 'ns/d']);
    const removed = ni('n1', {}, { nginx: [tag('2', ['b'])], redis: [tag('7', ['c'])] });
    expect([...ownersToWake(base, removed)]).toContain('ns/a');
    expect([...ownersToWake(removed, base)]).toContain('ns/a');
  });
  it('wakes owners of a tag whose version was bumped', () => {
    const bumped = ni('n1', {}, { nginx: [tag('1', ['a']), tag('2', ['b'], { version: 1 })], redis: [tag('7', ['c'])] }, { nginx: base.status?.imageStatuses?.['nginx']?.tags ?? [] });
    expect([...ownersToWake(base, bumped)]).toEqual(['ns/b']);
  });
  it('wakes every owner of an image whose secrets or sandbox config changed', () => {
    const b = structuredClone(base);
    const nginx = b.spec?.images?.['nginx'];
    if (nginx) nginx.pullSecrets = [{ namespace: 'cfg', name: 's' }];
    expect([...ownersToWake(base, b)].sort()).toEqual(['ns/a', 'ns/b']);
  });
  it('wakes the owners of a whole image that went away', () => {
    const b = ni('n1', {}, { nginx: [tag('1', ['a']), tag('2', ['b'])] }, { nginx: base.status?.imageStatuses?.['nginx']?.tags ?? [] });
    expect([...ownersToWake(base, b)]).toEqual(['ns/c']);
  });
  it('notices a NodeImage that has room again', () => {
    const full: Record<string, ImageTagSpec[]> = {};
    for (let i = 0; i < 256; i++) full[`i${i}`] = [tag('1', ['a'])];
    const a = ni('n1', {}, full);
    const rest = { ...full };
    delete rest['i0'];
    expect(gainedRoom(a, ni('n1', {}, rest))).toBe(true);
    expect(gainedRoom(ni('n1', {}, rest), a)).toBe(false);
  });
});

describe('node selection', () => {
  const nodes = [ni('c', { zone: 'a', gpu: 'yes' }), ni('a', { zone: 'a' }), ni('b', { zone: 'b' })];
  const pods: Pod[] = [
    { metadata: { name: 'p1', namespace: 'ns', labels: { app: 'web' } }, spec: { nodeName: 'b', containers: [] }, status: { phase: 'Running' } },
    { metadata: { name: 'p2', namespace: 'ns', labels: { app: 'web' } }, spec: { nodeName: 'c', containers: [] }, status: { phase: 'Succeeded' } },
    { metadata: { name: 'p3', namespace: 'ns', labels: { app: 'web' } }, spec: { containers: [] }, status: { phase: 'Pending' } },
    { metadata: { name: 'p4', namespace: 'ns', labels: { app: 'db' } }, spec: { nodeName: 'a', containers: [] }, status: { phase: 'Running' } },
    { metadata: { name: 'p5', namespace: 'ns', labels: { app: 'web' } }, spec: { nodeName: 'gone', containers: [] }, status: { phase: 'Running' } },
    { metadata: { name: 'p6', namespace: 'ns', labels: { app: 'web' }, deletionTimestamp: new Date().toISOString() }, spec: { nodeName: 'a', containers: [] }, status: { phase: 'Running' } },
  ];
  const src: NodeSource = { nodeImage: (n) => nodes.find((x) => x.metadata?.name === n), nodeImages: () => nodes, pods: (ns) => pods.filter((p) => p.metadata?.namespace === ns) };
  const job = (spec: Partial<ImagePullJob['spec']>): ImagePullJob => ({ metadata: { name: 'j', namespace: 'ns' }, spec: { image: 'x', completionPolicy: {}, ...spec } });
  const names = (j: ImagePullJob): string[] => selectNodes(j, src).map((n) => n.metadata?.name ?? '');
  it('takes every node without a selector, sorted by name', () => {
    expect(names(job({}))).toEqual(['a', 'b', 'c']);
  });
  it('takes named nodes that have a NodeImage', () => {
    expect(names(job({ selector: { names: ['c', 'zzz', 'a'] } }))).toEqual(['a', 'c']);
  });
  it('matches labels, expressions included; an empty selector matches every node', () => {
    expect(names(job({ selector: { matchLabels: { zone: 'a' } } }))).toEqual(['a', 'c']);
    expect(names(job({ selector: { matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] } }))).toEqual(['a', 'b']);
    expect(names(job({ selector: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] } }))).toEqual(['b']);
    expect(names(job({ selector: {} }))).toEqual(['a', 'b', 'c']);
  });
  it('takes the nodes of active scheduled matching pods in the job namespace', () => {
    expect(names(job({ podSelector: { matchLabels: { app: 'web' } } }))).toEqual(['b']);
    expect(names(job({ podSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } }))).toEqual(['a', 'b']);
  });
  it('leaves out NodeImages being deleted', () => {
    const deleting = [...nodes, { ...ni('d', { zone: 'a' }), metadata: { name: 'd', labels: { zone: 'a' }, deletionTimestamp: new Date().toISOString() } }];
    expect(selectNodes(job({}), { ...src, nodeImages: () => deleting }).map((n) => n.metadata?.name)).toEqual(['a', 'b', 'c']);
  });
  it('matches one NodeImage the same way for events (podSelector jobs go through pods)', () => {
    expect(selectsNodeImage(job({ selector: {} }), ni('x', {}))).toBe(true);
    expect(selectsNodeImage(job({ selector: { names: ['x'] } }), ni('x', {}))).toBe(true);
    expect(selectsNodeImage(job({ selector: { matchLabels: { zone: 'b' } } }), ni('x', { zone: 'a' }))).toBe(false);
    expect(selectsNodeImage(job({ podSelector: {} }), ni('x', {}))).toBe(false);
  });
  it('tells active pods and selecting pods', () => {
    expect(pods.map((p) => isActivePod(p))).toEqual([true, false, true, true, true, false]);
    const j = job({ podSelector: { matchLabels: { app: 'web' } } });
    expect(pods.map((p) => podSelects(j, p))).toEqual([true, false, false, false, true, false]);
    expect(podSelects({ ...j, metadata: { namespace: 'other' } }, pods[0] as Pod)).toBe(false);
  });
});
