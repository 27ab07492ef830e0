import type { Node } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { ImageTagSpec, NodeImage } from '../../api/types/nodeimage.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { auditEntries, auditSize, managerSpecWrites } from '../../hack/bench/audit.js';
import { nodeImages, tagStatus } from '../helpers/daemon.js';
import { createFakeNode } from '../helpers/fake-daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, kruise } from '../helpers/kube.js';

// The NodeImage controller of the shared manager against the real API server and kubelet nodes.
const env = clusterEnv();
const rest = restClient();
const nis = nodeImages(rest);
const nodes = new Resource<Node>(rest, core.nodes);
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
let ns = '';
const createdNodes: string[] = [];
const createdNodeImages: string[] = [];

beforeAll(async () => {
  ns = await createNamespace(rest, 'nodeimage');
});
afterAll(async () => {
  for (const n of createdNodes) await nodes.delete(undefined, n).catch(() => undefined);
  for (const n of createdNodeImages) await nis.delete(undefined, n).catch(() => undefined);
  await deleteNamespace(rest, ns);
});

const ago = (s: number): string => new Date(Date.now() - s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const tag = (t: string, over: Partial<ImageTagSpec> = {}): ImageTagSpec => ({ tag: t, version: 0, createdAt: ago(0), pullPolicy: { ttlSecondsAfterFinished: 3600 }, ...over });
let seq = 0;
async function fakeNodeImage(images: Required<NonNullable<NodeImage['spec']>>['images'], name = `${ns}-ni${seq++}`): Promise<string> {
  await nis.create({ metadata: { name, labels: { 'apps.kruise.io/fake-nodeimage': 'true' } }, spec: { images } });
  createdNodeImages.push(name);
  return name;
}
async function eventsOf(name: string, namespace: string): Promise<Array<{ reason?: string; message?: string }>> {
  const ev = new Resource<KubeObject & { reason?: string; message?: string }>(rest, core.events);
  return (await ev.list(namespace, { fieldSelector: `involvedObject.name=${name}` })).items;
}

describe('NodeImage controller', () => {
  it('keeps a NodeImage for each real node, with the node\'s labels', async () => {
    for (const n of env.nodes) {
      const node = await nodes.get(undefined, n.name);
      await eventually(async () => expect((await nis.get(undefined, n.name)).metadata?.labels).toEqual(node.metadata?.labels));
    }
  });

  it('creates one for a new node once Ready, mirrors its labels, deletes it with the node', async () => {
    const name = `${ns}-node`;
    createdNodes.push(name);
    await createFakeNode(rest, name, { zone: 'a' });
    await eventually(async () => expect((await nis.get(undefined, name)).metadata?.labels).toEqual({ zone: 'a' }), 15_000);
    await nodes.patch(undefined, name, { metadata: { labels: { zone: 'b', extra: 'x' } } });
    await eventually(async () => expect((await nis.get(undefined, name)).metadata?.labels).toEqual({ zone: 'b', extra: 'x' }));
    await nodes.delete(undefined, name);
    await eventually(async () => expect(await nis.get(undefined, name).then(() => 'present', () => 'gone')).toBe('gone'));
  });

  it('creates none for a node that is not Ready or is virtual-kubelet; keeps a fake NodeImage without node', async () => {
    const notReady = `${ns}-notready`;
    const virtual = `${ns}-virtual`;
    createdNodes.push(notReady, virtual);
    await createFakeNode(rest, notReady, {}, false);
    await createFakeNode(rest, virtual, { type: 'virtual-kubelet' });
    const fake = await fakeNodeImage({});
    await new Promise((r) => setTimeout(r, 3000));
    for (const n of [notReady, virtual]) expect(await nis.get(undefined, n).then(() => 'present', () => 'gone')).toBe('gone');
    expect((await nis.get(undefined, fake)).metadata?.name).toBe(fake);
  });

  it('drops tags whose owning job is gone, keeps other owners\' tags and tags that never had owners', async () => {
    const job = await jobs.create({ metadata: { name: 'alive', namespace: ns }, spec: { image: `${env.registryOpen}/many-090:1.0`, parallelism: 0, completionPolicy: { type: 'Never' }, selector: { names: [`${ns}-owners`] } } });
    const ref = (name: string, uid: string) => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', name, namespace: ns, uid });
    const name = await fakeNodeImage(
      {
        [`${env.registryOpen}/many-090`]: { tags: [tag('1.0', { ownerReferences: [ref('alive', job.metadata?.uid ?? '')] })] },
        'example.com/gone': { tags: [tag('1', { ownerReferences: [ref('deleted', '00000000-0000-0000-0000-000000000001')] }), tag('2', { ownerReferences: [ref('alive', job.metadata?.uid ?? ''), ref('deleted', '00000000-0000-0000-0000-000000000001')] })] },
        'example.com/other-kind': { tags: [tag('1', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', namespace: ns, uid: '00000000-0000-0000-0000-000000000002' }] })] },
        'example.com/no-owner': { tags: [tag('1')] },
        // A job reference without a namespace names no job: dropped, and never asked for.
        'example.com/no-namespace': { tags: [tag('1', { ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', name: 'alive', uid: '00000000-0000-0000-0000-000000000003' }] })] },
      },
      `${ns}-owners`,
    );
    await eventually(async () => {
      const ni = await nis.get(undefined, name);
      expect(Object.keys(ni.spec?.images ?? {}).sort()).toEqual([`${env.registryOpen}/many-090`, 'example.com/gone', 'example.com/no-owner', 'example.com/other-kind']);
      expect(ni.spec?.images?.['example.com/gone']?.tags.map((t) => [t.tag, t.ownerReferences?.map((o) => o.name)])).toEqual([['2', ['alive']]]);
    });
    await jobs.delete(ns, 'alive');
    await eventually(async () => {
      const ni = await nis.get(undefined, name);
      expect(Object.keys(ni.spec?.images ?? {}).sort()).toEqual(['example.com/no-owner', 'example.com/other-kind']);
    });
  });

  it('drops a finished tag once its ttlSecondsAfterFinished has passed', async () => {
    const name = await fakeNodeImage({ 'example.com/ttl': { tags: [tag('1', { pullPolicy: { ttlSecondsAfterFinished: 2 } }), tag('2')] } });
    const ni = await nis.get(undefined, name);
    const done = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const from = auditSize(env.auditLog);
    await nis.updateStatus({ ...ni, status: { desired: 2, succeeded: 2, imageStatuses: { 'example.com/ttl': { tags: [{ tag: '1', phase: 'Succeeded', version: 0, completionTime: done }, { tag: '2', phase: 'Succeeded', version: 0, completionTime: done }] } } } });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await nis.get(undefined, name)).spec?.images?.['example.com/ttl']?.tags.map((t) => t.tag)).toEqual(['1', '2']);
    await eventually(async () => expect((await nis.get(undefined, name)).spec?.images?.['example.com/ttl']?.tags.map((t) => t.tag)).toEqual(['2']), 10_000);
    // The drop is a patch guarded by the dropped tag's status, which a daemon's status write in
    // between refuses only when it moves that status, unlike a PUT, which any status write refuses.
    await eventually(async () =>
      expect(managerSpecWrites(auditEntries(env.auditLog, from, `"name":"${name}"`), new Set([name])).map((e) => `${e.verb ?? ''} ${e.responseStatus?.code ?? 0}`)).toEqual(['patch 200']),
    );
  });

  it('holds a finished tag past its TTL while the Always job owning it runs, and drops it once the job completes (upstream drops it, and the job pulls again)', async () => {
    const name = `${ns}-held`;
    const img = `${env.registryOpen}/many-092`;
    // Parallelism 0 keeps the job running: it places nothing until raised below.
    const job = await jobs.create({ metadata: { name: 'runs', namespace: ns }, spec: { image: `${img}:1.0`, parallelism: 0, completionPolicy: { type: 'Always' }, selector: { names: [name] } } });
    const owner = [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', name: 'runs', namespace: ns, uid: job.metadata?.uid ?? '' }];
    await fakeNodeImage({ 'example.com/held': { tags: [tag('1', { ownerReferences: owner, pullPolicy: { ttlSecondsAfterFinished: 1 } })] } }, name);
    const done = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const held = { tag: '1', phase: 'Succeeded' as const, version: 0, completionTime: done };
    await nis.updateStatus({ ...(await nis.get(undefined, name)), status: { desired: 1, succeeded: 1, imageStatuses: { 'example.com/held': { tags: [held] } } } });
    await new Promise((r) => setTimeout(r, 4000));
    expect((await nis.get(undefined, name)).spec?.images?.['example.com/held']?.tags.map((t) => t.tag)).toEqual(['1']);

    await jobs.patch(ns, 'runs', { spec: { parallelism: 1 } });
    const placed = await eventually(async () => {
      const cur = await nis.get(undefined, name);
      expect(cur.spec?.images?.[img]?.tags.map((t) => t.tag)).toEqual(['1.0']);
      return cur;
    });
    // Answer the job's tag as a daemon would: the job completes, which releases the held tag.
    await nis.updateStatus({ ...placed, status: { desired: 2, succeeded: 2, imageStatuses: { 'example.com/held': { tags: [held] }, [img]: { tags: [{ tag: '1.0', phase: 'Succeeded', version: 0, completionTime: done }] } } } });
    await eventually(async () => expect((await jobs.get(ns, 'runs')).status).toMatchObject({ succeeded: 1, completionTime: expect.any(String) }));
    await eventually(async () => {
      const images = (await nis.get(undefined, name)).spec?.images ?? {};
      expect(Object.keys(images)).toEqual([img]);
    }, 10_000);
  });

  it('fails tags a node never answered and pulls that overran their deadline, with upstream\'s messages, and tells the owning job', async () => {
    const name = `${ns}-silent`;
    const img = `${env.registryOpen}/many-091`;
    // Parallelism 0: the job writes nothing itself, it only follows the tag written below for it.
    await jobs.create({ metadata: { name: 'waits', namespace: ns }, spec: { image: `${img}:1.0`, parallelism: 0, completionPolicy: { type: 'Always' }, selector: { names: [name] } } });
    const job = await jobs.get(ns, 'waits');
    const owner = [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', name: 'waits', namespace: ns, uid: job.metadata?.uid ?? '' }];
    const slowPolicy = { ttlSecondsAfterFinished: 3600, activeDeadlineSeconds: 60 };
    await fakeNodeImage({ 'example.com/slow': { tags: [tag('1', { pullPolicy: slowPolicy }), tag('2', { createdAt: ago(30) })] } }, name);
    const ni = await nis.get(undefined, name);
    await nis.updateStatus({ ...ni, status: { desired: 2, pulling: 1, imageStatuses: { 'example.com/slow': { tags: [{ tag: '1', phase: 'Pulling', version: 0, startTime: ago(0) }] } } } });
    // Now move the tags into the past, as if node and daemon had gone silent long ago.
    const fresh = await nis.get(undefined, name);
    await nis.update({
      ...fresh,
      spec: {
        images: {
          [img]: { tags: [tag('1.0', { createdAt: ago(660), ownerReferences: owner })] },
          'example.com/slow': { tags: [tag('1', { createdAt: ago(1300), pullPolicy: slowPolicy }), tag('2', { createdAt: ago(30) })] },
        },
      },
    });
    await eventually(async () => {
      const cur = await nis.get(undefined, name);
      expect(tagStatus(cur, img, '1.0')).toMatchObject({ phase: 'Failed', version: 0, message: 'node has not responded for a long time' });
      expect(tagStatus(cur, 'example.com/slow', '1')).toMatchObject({ phase: 'Failed', message: 'pulling exceeds the activeDeadlineSeconds', startTime: expect.any(String) });
      expect(tagStatus(cur, 'example.com/slow', '2')).toBeUndefined();
      expect(cur.status).toMatchObject({ desired: 3, failed: 2, succeeded: 0, pulling: 0 });
    });
    const done = await eventually(async () => {
      const j = await jobs.get(ns, 'waits');
      if (!j.status?.completionTime) throw new Error('job not completed');
      return j;
    });
    expect(done.status).toMatchObject({ desired: 1, failed: 1, failedNodes: [name] });
    await eventually(async () => {
      expect((await eventsOf(name, 'default')).map((e) => e.message)).toEqual(expect.arrayContaining([`Image ${img}:1.0 node has not responded for a long time`]));
      expect((await eventsOf('waits', ns)).map((e) => e.reason)).toContain('PullImageFailed');
    });
  });

  it('fails unanswered tags after a minute on a node that was already not Ready (upstream waits 10 minutes)', async () => {
    const name = `${ns}-down`;
    createdNodes.push(name);
    await createFakeNode(rest, name, {}, false, 600_000);
    // The controller creates no NodeImage for a node that is not Ready; one made by hand is kept in sync.
    await nis.create({ metadata: { name }, spec: { images: { 'example.com/down': { tags: [tag('1', { createdAt: ago(90) }), tag('2', { createdAt: ago(5) })] } } } });
    await eventually(async () => expect(tagStatus(await nis.get(undefined, name), 'example.com/down', '1')).toMatchObject({ phase: 'Failed', message: 'node has not responded for a long time' }));
    expect(tagStatus(await nis.get(undefined, name), 'example.com/down', '2')).toBeUndefined();
  });
});
