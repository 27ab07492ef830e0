import { load } from 'js-yaml';
import { kruise } from '../../kube/kruise.js';
import { ApiError } from '../../kube/rest.js';
import { Resource, type KubeObject, type ResourceType } from '../../kube/resource.js';
import { fullContainerRecreateRequest, fullImageListPullJob, fullImagePullJob, fullNodeImage, validContainerRecreateRequests, validImageListPullJobs, validImagePullJobs, validNodeImages } from '../fixtures/api-examples.js';
import { createNamespace, deleteNamespace, restClient } from '../helpers/kube.js';

type Obj = KubeObject & { spec?: unknown; status?: unknown };
const rest = restClient();
let ns = '';
beforeAll(async () => {
  ns = await createNamespace(rest, 'crd');
});
afterAll(() => deleteNamespace(rest, ns));

const cases: Array<[string, ResourceType, Obj[], Obj]> = [
  ['NodeImage', kruise.nodeImages, validNodeImages as Obj[], fullNodeImage as Obj],
  ['ImagePullJob', kruise.imagePullJobs, validImagePullJobs as Obj[], fullImagePullJob as Obj],
  ['ImageListPullJob', kruise.imageListPullJobs, validImageListPullJobs as Obj[], fullImageListPullJob as Obj],
  ['ContainerRecreateRequest', kruise.crrs, validContainerRecreateRequests as Obj[], fullContainerRecreateRequest as Obj],
];

function placed(o: Obj, type: ResourceType, i: number): Obj {
  const name = `${ns}-${i}-${(o.metadata?.name ?? 'x').slice(0, 30)}`;
  const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, ...md } = o.metadata ?? {};
  return { ...o, metadata: { ...md, name, ...(type.namespaced ? { namespace: ns } : { namespace: undefined }) } };
}

describe('CRDs in the real API server', () => {
  it.each(cases)('%s: every example round-trips, spec and status (status through the subresource)', async (_kind, type, examples, full) => {
    const res = new Resource<Obj>(rest, type);
    for (const [i, ex] of examples.entries()) {
      const obj = placed(ex, type, i);
      const created = await res.create({ ...obj, status: undefined });
      try {
        expect(created.spec).toEqual(obj.spec);
        // The status subresource ignores status on create and spec on status writes.
        expect(created.status).toBeUndefined();
        const withStatus = await res.updateStatus({ ...created, status: full.status });
        expect(withStatus.status).toEqual(full.status);
        expect((await res.get(obj.metadata?.namespace, obj.metadata?.name ?? '')).status).toEqual(full.status);
      } finally {
        await res.delete(obj.metadata?.namespace, obj.metadata?.name ?? '');
      }
    }
  });

  it('prunes fields upstream does not have', async () => {
    const res = new Resource<Obj>(rest, kruise.imagePullJobs);
    const created = await res.create({
      metadata: { name: 'pruned', namespace: ns },
      spec: { image: 'nginx:1.25', completionPolicy: {}, notAField: true, pullPolicy: { timeoutSeconds: 30, bogus: 1 } },
    } as Obj);
    expect(created.spec).toEqual({ image: 'nginx:1.25', completionPolicy: {}, pullPolicy: { timeoutSeconds: 30 } });
  });

  it('rejects what the schema forbids, naming the field', async () => {
    const res = new Resource<Obj>(rest, kruise.imagePullJobs);
    const err = await res
      .create({ metadata: { name: 'bad', namespace: ns }, spec: { image: 'nginx', completionPolicy: { type: 'Sometimes' } } } as Obj)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(422);
    expect((err as ApiError).message).toContain('spec.completionPolicy.type');
    const missing = await res.create({ metadata: { name: 'bad2', namespace: ns }, spec: { image: 'nginx' } } as Obj).catch((e: unknown) => e);
    expect((missing as ApiError).message).toContain('spec.completionPolicy');
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
  parallelism: "10%"
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
  it.each(upstreamManifests.map((m) => [((load(m) as Obj).metadata?.name ?? ''), m]))('applies upstream manifest %s unchanged', async (_name, text) => {
    const obj = load(text) as Obj;
    const type = Object.values(kruise).find((t) => t.kind === obj.kind);
    if (!type) throw new Error(`no type for ${obj.kind}`);
    const res = new Resource<Obj>(rest, type);
    const created = await res.create({ ...obj, metadata: { ...obj.metadata, namespace: ns } });
    const expected = JSON.parse(JSON.stringify(obj.spec, (_k, v: unknown) => (v === null ? undefined : v))) as unknown;
    expect(created.spec).toEqual(expected);
  });
});
