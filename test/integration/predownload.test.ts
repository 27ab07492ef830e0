import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod, PodTemplateSpec } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { ControllerRevision } from '../../api/types/core.js';
import type { AdvancedStatefulSet, CloneSet } from '../../api/types/workloads.js';
import { CriClient } from '../../daemon/cri/client.js';
import { installCrds } from '../../kube/crds.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { ANNOTATION_PREDOWNLOAD_FROM } from '../../manager/predownload/decide.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, kruise } from '../helpers/kube.js';

// CloneSets, their ControllerRevisions and pods written the way OpenKruise's CloneSet controller
// writes them; kruise-ts's manager (run by the global setup) reacts.
const env = clusterEnv();
const rest = restClient();
const cloneSets = new Resource<CloneSet & KubeObject>(rest, kruise.cloneSets);
const statefulSets = new Resource<AdvancedStatefulSet & KubeObject>(rest, kruise.statefulSets);
const revisions = new Resource<ControllerRevision & KubeObject>(rest, core.controllerrevisions);
const jobs = new Resource<ImagePullJob & KubeObject>(rest, kruise.imagePullJobs);
const pods = new Resource<Pod & KubeObject>(rest, core.pods);
const events = new Resource<KubeObject & { reason?: string; message?: string; type?: string; source?: { component?: string } }>(rest, core.events);
let ns = '';

beforeAll(async () => {
  ns = await createNamespace(rest, 'predl');
  await installCrds(rest, join(import.meta.dirname, '..', 'fixtures', 'crds'));
});
afterAll(() => deleteNamespace(rest, ns));

const template = (name: string, images: Record<string, string>, extra: Record<string, unknown> = {}): PodTemplateSpec => ({
  metadata: { labels: { app: name } },
  spec: {
    hostNetwork: true,
    containers: Object.entries(images).map(([c, image]) => ({ name: c, image, command: ['/bin/sleep', 'infinity'], ...extra })),
  },
});

interface RolloutOptions {
  replicas?: number;
  partition?: number | string;
  maxUnavailable?: number | string;
  type?: string;
  annotations?: Record<string, string>;
  ready?: number;
  newExtra?: Record<string, unknown>;
}

/** A CloneSet mid-rollout from `from` to `to`, with both revisions, as the CloneSet controller leaves it. */
async function rollout(name: string, from: Record<string, string>, to: Record<string, string>, o: RolloutOptions = {}): Promise<{ cs: CloneSet & KubeObject; oldName: string; newName: string }> {
  const cs = await cloneSets.create({
    metadata: { name, namespace: ns, annotations: o.annotations ?? {} },
    spec: {
      replicas: o.replicas ?? 6,
      selector: { matchLabels: { app: name } },
      template: template(name, to, o.newExtra),
      updateStrategy: { type: (o.type ?? 'InPlaceIfPossible') as 'InPlaceIfPossible', partition: o.partition ?? 3, ...(o.maxUnavailable !== undefined ? { maxUnavailable: o.maxUnavailable } : {}) },
    },
  });
  const owner = [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name, uid: cs.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }];
  const rev = async (hash: string, images: Record<string, string>, n: number, extra?: Record<string, unknown>): Promise<string> => {
    const revName = `${name}-${hash}`;
    await revisions.create({
      metadata: { name: revName, namespace: ns, labels: { app: name, 'controller.kubernetes.io/hash': hash }, ownerReferences: owner },
      revision: n,
      data: { spec: { template: { ...template(name, images, extra), $patch: 'replace' } } },
    });
    return revName;
  };
  const oldName = await rev('6c9f8b7d5', from, 1);
  const newName = await rev('7d8f9c6b4', to, 2, o.newExtra);
  const withStatus = await cloneSets.updateStatus({
    ...cs,
    status: { observedGeneration: 1, replicas: 6, readyReplicas: 6, updatedReplicas: 1, updatedReadyReplicas: o.ready ?? 1, currentRevision: oldName, updateRevision: newName },
  });
  return { cs: withStatus, oldName, newName };
}

async function setStatus(name: string, patch: Record<string, unknown>): Promise<void> {
  await cloneSets.patchStatus(ns, name, { status: patch });
}

async function jobsOf(uid: string): Promise<Array<ImagePullJob & KubeObject>> {
  return (await jobs.list(ns)).items.filter((j) => j.metadata?.ownerReferences?.some((r) => r.uid === uid) && !j.metadata?.deletionTimestamp);
}

async function revisionLabels(name: string): Promise<Record<string, string>> {
  return (await revisions.get(ns, name)).metadata?.labels ?? {};
}

const img = (n: number): string => `${env.registryOpen}/many-${String(n).padStart(3, '0')}:1.0`;

describe('CloneSet image pre-download', () => {
  it('switches on when the CloneSet CRD appears', async () => {
    await eventually(() => expect(readFileSync(join(env.envDir, 'kruise', 'manager.log'), 'utf8')).toContain('CloneSet CRD found: image pre-download is on'), 30_000);
  });

  it('creates one ImagePullJob per changed container, as upstream builds it, and labels the revision', async () => {
    const { cs, newName, oldName } = await rollout('web', { app: img(70), side: img(71) }, { app: img(72), side: img(73) }, { annotations: { 'apps.kruise.io/image-predownload-parallelism': '2', 'apps.kruise.io/image-predownload-timeout-seconds': '120' } });
    const created = await eventually(async () => {
      const js = await jobsOf(cs.metadata?.uid ?? '');
      expect(js).toHaveLength(2);
      return js.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    });
    expect(created.map((j) => j.metadata?.name)).toEqual([`${newName}-app`, `${newName}-side`]);
    expect(created[0]?.spec).toMatchObject({
      image: img(72),
      parallelism: 2,
      pullPolicy: { backoffLimit: 1, timeoutSeconds: 120 },
      completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 600 },
      podSelector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'controller-revision-hash', operator: 'NotIn', values: [newName, '7d8f9c6b4'] }] },
    });
    expect(created[0]?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'CloneSet', name: 'web', controller: true });
    await eventually(async () => expect(await revisionLabels(newName)).toMatchObject({ 'apps.kruise.io/pre-predownload-created': 'true' }));
    expect((await revisions.get(ns, newName)).metadata?.annotations?.[ANNOTATION_PREDOWNLOAD_FROM]).toBe(oldName);
    await eventually(async () => {
      const evs = (await events.list(ns, { fieldSelector: 'involvedObject.name=web' })).items;
      expect(evs.filter((e) => e.reason === 'CreatedImagePullJob')).toHaveLength(2);
    });
  });

  it.each([
    ['3 replicas', 'small', { replicas: 3 }],
    ['ReCreate', 'recreate', { type: 'ReCreate' }],
    ['one batch (partition 0, maxUnavailable 100%)', 'onebatch', { partition: 0, maxUnavailable: '100%' }],
    ['a change beyond images', 'envchange', { newExtra: { env: [{ name: 'MODE', value: 'new' }] } }],
  ])('skips %s and labels the revision ignored', async (_label, name, o) => {
    const { cs, newName } = await rollout(name, { app: img(74) }, { app: img(75) }, o as RolloutOptions);
    await eventually(async () => expect(await revisionLabels(newName)).toMatchObject({ 'apps.kruise.io/image-predownload-ignored': 'true' }));
    expect(await jobsOf(cs.metadata?.uid ?? '')).toEqual([]);
  });

  it('waits for min-updated-ready-pods (a percent, rounded up), and reports an invalid value', async () => {
    const { cs } = await rollout('minready', { app: img(76) }, { app: img(77) }, { ready: 1, annotations: { 'apps.kruise.io/image-predownload-min-updated-ready-pods': '50%' } });
    await new Promise((r) => setTimeout(r, 2000));
    expect(await jobsOf(cs.metadata?.uid ?? '')).toEqual([]);
    await setStatus('minready', { updatedReadyReplicas: 3 });
    await eventually(async () => expect(await jobsOf(cs.metadata?.uid ?? '')).toHaveLength(1));
    const bad = await rollout('badann', { app: img(76) }, { app: img(78) }, { annotations: { 'apps.kruise.io/image-predownload-min-updated-ready-pods': 'soon' } });
    await eventually(async () => expect(await jobsOf(bad.cs.metadata?.uid ?? '')).toHaveLength(1));
    await eventually(async () => {
      const evs = (await events.list(ns, { fieldSelector: 'involvedObject.name=badann' })).items;
      expect(evs.find((e) => e.reason === 'InvalidImagePreDownloadAnnotation')).toMatchObject({ type: 'Warning' });
    });
  });

  it('deletes the jobs when the rollout ends, and pre-downloads again when a later rollout returns to that revision (#1419)', async () => {
    const { cs, newName, oldName } = await rollout('rollback', { app: img(79) }, { app: img(80) });
    const uid = cs.metadata?.uid ?? '';
    await eventually(async () => expect(await jobsOf(uid)).toHaveLength(1));
    await setStatus('rollback', { currentRevision: newName, updateRevision: newName });
    await eventually(async () => expect(await jobsOf(uid)).toEqual([]), 30_000);
    // Roll back to the first revision, finish, then forward to newName again.
    await setStatus('rollback', { currentRevision: newName, updateRevision: oldName });
    await eventually(async () => expect((await jobsOf(uid)).map((j) => j.spec.image)).toEqual([img(79)]), 30_000);
    await setStatus('rollback', { currentRevision: oldName, updateRevision: oldName });
    await eventually(async () => expect(await jobsOf(uid)).toEqual([]), 30_000);
    await setStatus('rollback', { currentRevision: oldName, updateRevision: newName });
    await eventually(async () => expect((await jobsOf(uid)).map((j) => j.spec.image)).toEqual([img(80)]), 30_000);
  });

  it('pulls the new image on the nodes of the old pods only (end to end, real daemons)', async () => {
    const [n1, n2] = env.nodes;
    if (!n1 || !n2) throw new Error('needs two nodes');
    const newImage = img(81);
    const cris = [new CriClient(n1.criSocket), new CriClient(n2.criSocket)];
    try {
      for (const c of cris) await c.image('RemoveImage', { image: { image: newImage } });
      const { oldName, cs } = await rollout('e2e', { app: `${env.registryOpen}/busybox:1.0` }, { app: newImage }, { replicas: 4, partition: 2 });
      // Two old-revision pods, both on the first node.
      for (const i of [0, 1]) {
        await pods.create({
          metadata: { name: `e2e-${i}`, namespace: ns, labels: { app: 'e2e', 'controller-revision-hash': oldName } },
          spec: { nodeName: n1.name, hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: `${env.registryOpen}/busybox:1.0`, command: ['/bin/sleep', 'infinity'] }] },
        });
      }
      await eventually(async () => expect(await jobsOf(cs.metadata?.uid ?? '')).toHaveLength(1));
      await eventually(async () => expect((await cris[0]?.image('ImageStatus', { image: { image: newImage } }))?.image).not.toBeNull(), 120_000, 500);
      const job = (await jobsOf(cs.metadata?.uid ?? ''))[0];
      await eventually(async () => expect((await jobs.get(ns, job?.metadata?.name ?? '')).status).toMatchObject({ desired: 1, succeeded: 1 }), 60_000);
      expect((await cris[1]?.image('ImageStatus', { image: { image: newImage } }))?.image).toBeNull();
    } finally {
      for (const c of cris) c.close();
    }
  });
});

interface StatefulSetRolloutOptions {
  type?: 'RollingUpdate' | 'OnDelete';
  /** undefined: no rollingUpdate at all. */
  podUpdatePolicy?: 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly';
  partition?: number;
}

/**
 * An Advanced StatefulSet mid-rollout, as OpenKruise's controller leaves it: revisions named
 * `<name>-<hash>` labelled controller.kubernetes.io/hash (k8s.io/kubernetes/pkg/controller/history),
 * status.currentRevision/updateRevision naming them (pkg/controller/statefulset/stateful_set_control.go).
 */
async function statefulSetRollout(name: string, from: Record<string, string>, to: Record<string, string>, o: StatefulSetRolloutOptions): Promise<{ sts: AdvancedStatefulSet & KubeObject; newName: string }> {
  const rollingUpdate = o.podUpdatePolicy === undefined ? undefined : { podUpdatePolicy: o.podUpdatePolicy, partition: o.partition ?? 3 };
  const sts = await statefulSets.create({
    metadata: { name, namespace: ns },
    spec: {
      replicas: 6,
      selector: { matchLabels: { app: name } },
      template: template(name, to),
      updateStrategy: { type: o.type ?? 'RollingUpdate', ...(rollingUpdate ? { rollingUpdate } : {}) },
    },
  });
  const owner = [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name, uid: sts.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }];
  const rev = async (hash: string, images: Record<string, string>, n: number): Promise<string> => {
    const revName = `${name}-${hash}`;
    await revisions.create({
      metadata: { name: revName, namespace: ns, labels: { app: name, 'controller.kubernetes.io/hash': hash }, ownerReferences: owner },
      revision: n,
      data: { spec: { template: { ...template(name, images), $patch: 'replace' } } },
    });
    return revName;
  };
  const oldName = await rev('5b7c9d8f6', from, 1);
  const newName = await rev('6f8d7c5b9', to, 2);
  const withStatus = await statefulSets.updateStatus({
    ...sts,
    status: { observedGeneration: 1, replicas: 6, readyReplicas: 6, currentReplicas: 5, updatedReplicas: 1, updatedReadyReplicas: 1, currentRevision: oldName, updateRevision: newName },
  });
  return { sts: withStatus, newName };
}

describe('Advanced StatefulSet image pre-download', () => {
  it('switches on when the StatefulSet CRD appears', async () => {
    await eventually(() => expect(readFileSync(join(env.envDir, 'kruise', 'manager.log'), 'utf8')).toContain('StatefulSet CRD found: image pre-download is on'), 30_000);
  });

  it('creates one ImagePullJob per changed container of an in-place rollout, with the statefulset-controller\'s events', async () => {
    const { sts, newName } = await statefulSetRollout('db', { app: img(82), side: img(83) }, { app: img(84), side: img(83) }, { podUpdatePolicy: 'InPlaceIfPossible' });
    const created = await eventually(async () => {
      const js = await jobsOf(sts.metadata?.uid ?? '');
      expect(js).toHaveLength(1);
      return js;
    });
    expect(created[0]?.metadata?.name).toBe(`${newName}-app`);
    expect(created[0]?.spec).toMatchObject({
      image: img(84),
      podSelector: { matchLabels: { app: 'db' }, matchExpressions: [{ key: 'controller-revision-hash', operator: 'NotIn', values: [newName, '6f8d7c5b9'] }] },
    });
    expect(created[0]?.metadata?.labels).toEqual({ app: 'db', 'controller.kubernetes.io/hash': '6f8d7c5b9' });
    expect(created[0]?.metadata?.ownerReferences?.[0]).toMatchObject({ apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'db', controller: true });
    await eventually(async () => expect(await revisionLabels(newName)).toMatchObject({ 'apps.kruise.io/pre-predownload-created': 'true' }));
    await eventually(async () => {
      const evs = (await events.list(ns, { fieldSelector: 'involvedObject.name=db' })).items.filter((e) => e.reason === 'CreatedImagePullJob');
      expect(evs.map((e) => e.source?.component)).toEqual(['statefulset-controller']);
    });
  });

  it.each([
    ['updateStrategy OnDelete', 'ondelete', { type: 'OnDelete', podUpdatePolicy: 'InPlaceIfPossible' }],
    ['podUpdatePolicy ReCreate', 'recreate', { podUpdatePolicy: 'ReCreate' }],
    ['no rollingUpdate (pods are recreated)', 'norolling', {}],
  ])('skips %s and labels the revision ignored', async (_label, name, o) => {
    const { sts, newName } = await statefulSetRollout(`sts-${name}`, { app: img(85) }, { app: img(86) }, o as StatefulSetRolloutOptions);
    await eventually(async () => expect(await revisionLabels(newName)).toMatchObject({ 'apps.kruise.io/image-predownload-ignored': 'true' }));
    expect(await jobsOf(sts.metadata?.uid ?? '')).toEqual([]);
  });
});
