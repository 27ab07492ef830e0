import type { Pod } from '../../api/types/core.js';
import { API_VERSION_V1ALPHA1, API_VERSION_V1BETA1, GROUP } from '../../api/group-version.js';
import { ANNOTATION_CRR_SYNC_CONTAINER_STATUSES, ANNOTATION_CRR_UNREADY_ACQUIRED, LABEL_FAKE_NODE_IMAGE } from '../../api/metadata-keys.js';
import type { KubeObject } from '../../api/types/common.js';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';
import { discoverKruise } from '../../kube/kruise.js';
import { core, Resource, type ResourceType } from '../../kube/resource.js';
import { updateWithRetry } from '../../kube/write.js';
import { createFakeNode } from '../helpers/fake-daemon.js';
import { createNamespace, deleteNamespace, restClient } from '../helpers/kube.js';

// Every kind written through one version and read through the other sees the same object: the API
// server converts NodeImage, ImagePullJob and ImageListPullJob by their apiVersion alone, and
// ContainerRecreateRequest through kruise-ts's conversion webhook (snapshot and unready moment
// between v1alpha1 annotations and v1beta1 status). Run on OpenKruise v1.9's CRDs as well, where
// ContainerRecreateRequest is served as v1alpha1 alone.
type Obj = KubeObject & { spec?: unknown; status?: unknown };
const rest = restClient();
let ns = '';
beforeAll(async () => {
  ns = await createNamespace(rest, 'versions');
});
afterAll(() => deleteNamespace(rest, ns));

const raw = (version: string, plural: string, kind: string, namespaced: boolean): Resource<Obj> =>
  new Resource<Obj>(rest, { group: GROUP, version, plural, kind, namespaced } satisfies ResourceType);

const simpleKinds = [
  {
    kind: 'NodeImage',
    plural: 'nodeimages',
    namespaced: false,
    object: (name: string): Obj => ({
      metadata: { name, labels: { [LABEL_FAKE_NODE_IMAGE]: 'true' } },
      spec: { images: { busybox: { tags: [{ tag: '1.36', version: 0, createdAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), pullPolicy: { ttlSecondsAfterFinished: 300 } }] } } },
    }),
  },
  {
    kind: 'ImagePullJob',
    plural: 'imagepulljobs',
    namespaced: true,
    object: (name: string): Obj => ({ metadata: { name }, spec: { image: 'busybox:1.36', selector: { names: ['no-such-node'] }, completionPolicy: { type: 'Always' } } }),
  },
  {
    kind: 'ImageListPullJob',
    plural: 'imagelistpulljobs',
    namespaced: true,
    object: (name: string): Obj => ({ metadata: { name }, spec: { images: ['busybox:1.36'], selector: { names: ['no-such-node'] }, completionPolicy: { type: 'Always' } } }),
  },
];

describe.each(simpleKinds)('$kind in v1alpha1 and v1beta1', (k) => {
  it.each([
    ['v1alpha1', 'v1beta1'],
    ['v1beta1', 'v1alpha1'],
  ])('written as %s reads back the same as %s', async (write, read) => {
    const name = `${ns}-${write}-${k.plural}`.slice(0, 60);
    const writer = raw(write, k.plural, k.kind, k.namespaced);
    const reader = raw(read, k.plural, k.kind, k.namespaced);
    const namespace = k.namespaced ? ns : undefined;
    const created = await writer.create({ ...k.object(name), metadata: { ...k.object(name).metadata, ...(namespace ? { namespace } : {}) } });
    const back = await reader.get(namespace, name);
    expect(back.apiVersion).toBe(`${GROUP}/${read}`);
    expect(back.spec).toEqual(created.spec);
    expect(back.metadata?.uid).toBe(created.metadata?.uid);
    await writer.delete(namespace, name);
  });
});

/**
 * A pod the CRR webhook accepts requests for, on a Node without kubelet or daemon, so no controller
 * but the API server's conversion touches the requests (the manager leaves completed ones be).
 */
async function podWithoutDaemon(): Promise<void> {
  const node = `${ns}-fake`;
  await createFakeNode(rest, node, {});
  const pods = new Resource<Pod & KubeObject>(rest, core.pods);
  await pods.create({ metadata: { name: 'versions', namespace: ns }, spec: { nodeName: node, containers: [{ name: 'main', image: 'busybox' }] } });
  await updateWithRetry(pods, ns, 'versions', (p) => ({
    ...p,
    status: { phase: 'Running', containerStatuses: [{ name: 'main', image: 'busybox', imageID: '', ready: true, restartCount: 0, containerID: 'containerd://fake' }] },
  }), { status: true });
}

describe('ContainerRecreateRequest in the versions the cluster serves', () => {
  afterAll(() => new Resource<KubeObject>(rest, core.nodes).delete(undefined, `${ns}-fake`).catch(() => undefined));

  it('converts the snapshot and the unready moment between v1alpha1 annotations and v1beta1 status, or serves v1alpha1 alone', async () => {
    const { versions } = await discoverKruise(rest);
    const alpha = raw('v1alpha1', 'containerrecreaterequests', 'ContainerRecreateRequest', true);
    const beta = raw('v1beta1', 'containerrecreaterequests', 'ContainerRecreateRequest', true);
    await podWithoutDaemon();
    const snapshot = [{ name: 'main', ready: true, restartCount: 1, containerID: 'containerd://x' }];
    const moment = '2026-01-01T10:00:05Z';
    const completed = { phase: 'Completed', completionTime: moment, containerRecreateStates: [{ name: 'main', phase: 'Succeeded' }] };
    const spec = { podName: 'versions', containers: [{ name: 'main' }] };

    // Written as v1alpha1 (annotations; the status must exist to carry them)...
    const annotations = { [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]: JSON.stringify(snapshot), [ANNOTATION_CRR_UNREADY_ACQUIRED]: moment };
    await alpha.create({ metadata: { name: 'a', namespace: ns, annotations }, spec });
    await alpha.patchStatus(ns, 'a', { status: completed });
    if (versions.crrs === 'v1alpha1') {
      // OpenKruise v1.9's CRD: v1alpha1 alone, which kruise-ts's clients read through their codec.
      await expect(beta.get(ns, 'a')).rejects.toMatchObject({ status: 404 });
      expect((await alpha.get(ns, 'a')).metadata?.annotations).toMatchObject(annotations);
      return;
    }
    // ...read as v1beta1 (status).
    const asBeta = (await beta.get(ns, 'a')) as ContainerRecreateRequest;
    expect(asBeta.apiVersion).toBe(API_VERSION_V1BETA1);
    expect(asBeta.status?.containerStatusSnapshot).toEqual(snapshot);
    expect(asBeta.status?.conditions?.find((c) => c.type === 'PodUnreadyAcquired')?.lastTransitionTime).toBe(moment);

    // Written as v1beta1 (status), read as v1alpha1 (annotations), the unready moment included
    // (upstream's conversion drops it on the way back).
    await beta.create({ metadata: { name: 'b', namespace: ns }, spec });
    await beta.patchStatus(ns, 'b', {
      status: { ...completed, containerStatusSnapshot: snapshot, conditions: [{ type: 'PodUnreadyAcquired', status: 'True', lastTransitionTime: moment, reason: 'UnreadyAcquired', message: 'test' }] },
    });
    const asAlpha = await alpha.get(ns, 'b');
    expect(asAlpha.apiVersion).toBe(API_VERSION_V1ALPHA1);
    expect(JSON.parse(asAlpha.metadata?.annotations?.[ANNOTATION_CRR_SYNC_CONTAINER_STATUSES] ?? 'null')).toEqual(snapshot);
    expect(asAlpha.metadata?.annotations?.[ANNOTATION_CRR_UNREADY_ACQUIRED]).toBe(moment);
    expect((asAlpha.status as Record<string, unknown> | undefined)?.['containerStatusSnapshot']).toBeUndefined();
  });
});
