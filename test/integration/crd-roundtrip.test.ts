import { load } from 'js-yaml';
import type { Pod } from '../../api/types/core.js';
import { defaultImageListPullJob } from '../../api/imagelistpulljob.js';
import { defaultImagePullJob } from '../../api/imagepulljob.js';
import { LABEL_CRR_ACTIVE, LABEL_CRR_NODE_NAME, LABEL_CRR_POD_UID, LABEL_FAKE_NODE_IMAGE } from '../../api/metadata-keys.js';
import { defaultNodeImage } from '../../api/nodeimage.js';
import type { ImageListPullJob } from '../../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { ApiError } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource, type ResourceType } from '../../kube/resource.js';
import { updateWithRetry } from '../../kube/write.js';
import { fullContainerRecreateRequest, fullImageListPullJob, fullImagePullJob, fullNodeImage, validImageListPullJobs, validImagePullJobs, validNodeImages } from '../fixtures/api-examples.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, kruise } from '../helpers/kube.js';

// The CRDs with kruise-ts's admission webhook in front of them, as installed: what is stored is
// what the webhook made of the request, then what the schema kept.
type Obj = KubeObject & { spec?: unknown; status?: unknown };
const env = clusterEnv();
const rest = restClient();
const pods = new Resource<Pod & KubeObject>(rest, core.pods);
let ns = '';
beforeAll(async () => {
  ns = await createNamespace(rest, 'crd');
});
afterAll(() => deleteNamespace(rest, ns));

const now = new Date();
const cases: Array<[string, ResourceType, Obj[], Obj, (o: Obj) => unknown]> = [
  ['NodeImage', kruise.nodeImages, validNodeImages as Obj[], fullNodeImage as Obj, (o) => defaultNodeImage(o as NodeImage, now).spec],
  ['ImagePullJob', kruise.imagePullJobs, validImagePullJobs as Obj[], fullImagePullJob as Obj, (o) => defaultImagePullJob(o as ImagePullJob, 'create').spec],
  ['ImageListPullJob', kruise.imageListPullJobs, validImageListPullJobs as Obj[], fullImageListPullJob as Obj, (o) => defaultImageListPullJob(o as ImageListPullJob).spec],
];

function placed(o: Obj, type: ResourceType, i: number): Obj {
  const name = `${ns}-${i}-${(o.metadata?.name ?? 'x').slice(0, 30)}`;
  const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, namespace: _ns, ...md } = o.metadata ?? {};
  // No Node has this name: the label keeps the NodeImage controller from deleting the example.
  const labels = type.kind === 'NodeImage' ? { ...md.labels, [LABEL_FAKE_NODE_IMAGE]: 'true' } : md.labels;
  return { ...o, metadata: { ...md, ...(labels ? { labels } : {}), name, ...(type.namespaced ? { namespace: ns } : {}) } };
}

/** Deletes even what carries a finalizer whose controller is not the subject here. */
async function remove(res: Resource<Obj>, namespace: string | undefined, name: string): Promise<void> {
  await res.patch(namespace, name, { metadata: { finalizers: null } }).catch(() => undefined);
  await res.delete(namespace, name).catch(() => undefined);
}

/** A running host-network pod on the first node, for CRRs to point at. */
async function runningPod(name: string, containers: NonNullable<Pod['spec']>['containers']): Promise<Pod & KubeObject> {
  await pods.create({
    metadata: { name, namespace: ns },
    spec: { nodeName: env.nodes[0]?.name ?? '', hostNetwork: true, terminationGracePeriodSeconds: 2, containers },
  });
  return eventually(async () => {
    const p = await pods.get(ns, name);
    if (!p.status?.containerStatuses?.every((c) => c.containerID && c.state?.running)) throw new Error(`pod ${name} not running`);
    return p;
  }, 60_000);
}

const sleeper = (name: string, extra: Record<string, unknown> = {}): NonNullable<Pod['spec']>['containers'][number] => ({
  name,
  image: `${env.registryOpen}/busybox:1.0`,
  imagePullPolicy: 'IfNotPresent',
  command: ['/bin/sleep', 'infinity'],
  ...extra,
});

describe('CRDs in the real API server', () => {
  it.each(cases)('%s: every example round-trips, spec and status (status through the subresource)', async (_kind, type, examples, full, admitted) => {
    const res = new Resource<Obj>(rest, type);
    for (const [i, ex] of examples.entries()) {
      const obj = placed(ex, type, i);
      const created = await res.create({ ...obj, status: undefined });
      try {
        expect(created.spec).toEqual(admitted(obj));
        // The status subresource ignores status on create and spec on status writes.
        expect(created.status).toBeUndefined();
        // The manager's controllers act on the example too and may write it first: the status goes
        // onto the fresh object, and what the server stored is what it answers with.
        const withStatus = await updateWithRetry(res, obj.metadata?.namespace, obj.metadata?.name ?? '', (fresh) => ({ ...fresh, status: full.status }), { status: true, initial: created });
        expect(withStatus?.status).toEqual(full.status);
      } finally {
        await remove(res, obj.metadata?.namespace, obj.metadata?.name ?? '');
      }
    }
  });

  it('ContainerRecreateRequest: admission fills in what comes from the pod, and every field round-trips', async () => {
    const pod = await runningPod('hooks', [
      sleeper('exec-c', { lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'true'] } } } }),
      sleeper('http-c', { ports: [{ name: 'admin', containerPort: 18123 }], lifecycle: { preStop: { httpGet: { path: '/quit', port: 'admin', httpHeaders: [{ name: 'X-Why', value: 'recreate' }] } } } }),
      sleeper('tcp-c', { lifecycle: { preStop: { tcpSocket: { port: 18124 } } } }),
    ]);
    const res = new Resource<Obj & { metadata?: { labels?: Record<string, string> } }>(rest, kruise.crrs);
    const created = await res.create({
      metadata: { name: 'roundtrip', namespace: ns },
      spec: { podName: 'hooks', containers: [{ name: 'exec-c' }, { name: 'http-c' }, { name: 'tcp-c' }], strategy: { orderedRecreate: true, minStartedSeconds: 1 }, activeDeadlineSeconds: 300, ttlSecondsAfterFinished: 600 },
    });
    try {
      expect(created.metadata?.labels).toMatchObject({ [LABEL_CRR_NODE_NAME]: pod.spec?.nodeName, [LABEL_CRR_POD_UID]: pod.metadata?.uid, [LABEL_CRR_ACTIVE]: 'true' });
      const spec = created.spec as { containers: Array<Record<string, unknown>>; strategy: Record<string, unknown> };
      const byName = Object.fromEntries(pod.status?.containerStatuses?.map((c) => [c.name, c]) ?? []);
      expect(spec.containers.map((c) => c['preStop'])).toEqual(pod.spec?.containers.map((c) => c.lifecycle?.preStop));
      expect(spec.containers[1]?.['ports']).toEqual(pod.spec?.containers[1]?.ports);
      for (const c of spec.containers) {
        expect(c['statusContext']).toEqual({ containerID: byName[c['name'] as string]?.containerID, restartCount: 0 });
      }
      expect(spec.strategy).toMatchObject({ failurePolicy: 'Fail', orderedRecreate: true, terminationGracePeriodSeconds: 2, minStartedSeconds: 1 });
      // The installed daemon executes the CRR; once it has finished it writes nothing more, so what
      // follows is the only writer and the answer is exactly what was written.
      await eventually(async () => {
        const phase = ((await res.get(ns, 'roundtrip')).status as { phase?: string } | undefined)?.phase;
        if (phase !== 'Completed' && phase !== 'Failed') throw new Error(`CRR phase ${phase ?? 'none'}`);
      }, 60_000, 250);
      const full = fullContainerRecreateRequest.status;
      let expected: unknown = full;
      if (kruise.crrs.version === 'v1alpha1') {
        // OpenKruise v1.9's CRD keeps the snapshot and the unready moment in annotations, written
        // with the object rather than its status; of the condition, the moment alone survives.
        await updateWithRetry(res, ns, 'roundtrip', (c) => ({ ...c, status: full }));
        expected = { ...full, conditions: full.conditions.map(({ observedGeneration: _g, ...c }) => c) };
      }
      // The status is complete (and long past its TTL): the manager deletes it soon after.
      const withStatus = await updateWithRetry(res, ns, 'roundtrip', (c) => ({ ...c, status: full }), { status: true });
      expect(withStatus?.status).toEqual(expected);
    } finally {
      await remove(res, ns, 'roundtrip');
    }
  });

  it('prunes fields upstream does not have', async () => {
    const res = new Resource<Obj>(rest, kruise.imagePullJobs);
    const created = await res.create({
      metadata: { name: 'pruned', namespace: ns },
      spec: { image: 'nginx:1.25', completionPolicy: {}, notAField: true, pullPolicy: { timeoutSeconds: 30, bogus: 1 } },
    } as Obj);
    // Unknown fields are pruned; the webhook's defaults are filled in.
    expect(created.spec).toEqual({ image: 'nginx:1.25', completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 30, backoffLimit: 3 }, imagePullPolicy: 'IfNotPresent' });
    await remove(res, ns, 'pruned');
  });

  it('rejects what the schema forbids, naming the field', async () => {
    const res = new Resource<Obj>(rest, kruise.imagePullJobs);
    const err = await res
      .create({ metadata: { name: 'bad', namespace: ns }, spec: { image: 'nginx', completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 'soon' } } } as Obj)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(422);
    expect((err as ApiError).message).toContain('spec.pullPolicy.timeoutSeconds');
  });

  // Manifests in the shape OpenKruise's documentation gives them, applied unchanged.
  const upstreamManifests = [
    `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: job-with-always
spec:
  image: nginx:latest
  parallelism: 10
  selector:
    matchLabels:
      node-type: xxx
  podSelector: null
  completionPolicy:
    type: Always
    activeDeadlineSeconds: 1200
    ttlSecondsAfterFinished: 300
  pullPolicy:
    backoffLimit: 3
    timeoutSeconds: 300
  pullSecrets:
  - secret-name1
  - secret-name2
  imagePullPolicy: IfNotPresent
  sandboxConfig:
    annotations:
      io.kubernetes.image.nydus: "true"
    labels:
      io.kubernetes.image.app: "foo"`,
    `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: job-with-never
spec:
  image: nginx:latest
  parallelism: "10"
  selector:
    names:
    - node-1
    - node-2
  completionPolicy:
    type: Never`,
    `apiVersion: apps.kruise.io/v1alpha1
kind: ImageListPullJob
metadata:
  name: job-with-list
spec:
  images:
  - nginx:latest
  - busybox:latest
  parallelism: 10
  completionPolicy:
    type: Always
    activeDeadlineSeconds: 1200
    ttlSecondsAfterFinished: 300
  pullPolicy:
    backoffLimit: 3
    timeoutSeconds: 300`,
    `apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata:
  name: xxx
spec:
  podName: pod-xxx
  containers:
  - name: app
  - name: sidecar
  strategy:
    failurePolicy: Fail
    orderedRecreate: false
    unreadyGracePeriodSeconds: 3
    minStartedSeconds: 10
  activeDeadlineSeconds: 300
  ttlSecondsAfterFinished: 1800`,
  ];
  it.each(upstreamManifests.map((m) => [((load(m) as Obj).metadata?.name ?? ''), m]))('applies upstream manifest %s unchanged', async (name, text) => {
    if (name === 'xxx') await runningPod('pod-xxx', [sleeper('app'), sleeper('sidecar')]);
    const obj = load(text) as Obj;
    const type = Object.values(kruise).find((t) => t.kind === obj.kind);
    if (!type) throw new Error(`no type for ${obj.kind}`);
    const res = new Resource<Obj>(rest, type);
    const created = await res.create({ ...obj, metadata: { ...obj.metadata, namespace: ns } });
    const expected = JSON.parse(JSON.stringify(obj.spec, (_k, v: unknown) => (v === null ? undefined : v))) as Record<string, unknown>;
    // Everything the user wrote is kept as written; admission only adds.
    expect(created.spec).toMatchObject(expected);
    await remove(res, ns, obj.metadata?.name ?? '');
  });
});
