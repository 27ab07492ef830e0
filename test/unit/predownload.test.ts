import type { PodTemplateSpec } from '../../api/types/core.js';
import type { ControllerRevision } from '../../api/types/core.js';
import type { CloneSet, AdvancedStatefulSet } from '../../api/types/workloads.js';
import { ANNOTATION_PREDOWNLOAD_FROM, PREDOWNLOAD_FROM_FINISHED, decide, inPlaceImageChanges, type Decision } from '../../manager/predownload/decide.js';
import { fromCloneSet, fromStatefulSet, scaled } from '../../manager/predownload/workload.js';

const template = (images: Record<string, string>, extra: Partial<PodTemplateSpec> = {}): PodTemplateSpec => ({
  metadata: { labels: { app: 'web' }, annotations: { team: 'a' } },
  spec: { containers: Object.entries(images).map(([name, image]) => ({ name, image })), imagePullSecrets: [{ name: 'regcred' }] },
  ...extra,
});

const revision = (name: string, t: PodTemplateSpec, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): ControllerRevision => ({
  metadata: { name, namespace: 'ns', labels: { 'controller.kubernetes.io/hash': name.split('-').pop() ?? '', ...labels }, annotations },
  revision: 1,
  data: { spec: { template: { ...t, $patch: 'replace' } } },
});

function cloneSet(o: { replicas?: number; partition?: number | string; maxUnavailable?: number | string; type?: 'ReCreate' | 'InPlaceIfPossible'; ready?: number; annotations?: Record<string, string>; current?: string; update?: string } = {}): CloneSet {
  return {
    metadata: { name: 'web', namespace: 'ns', uid: 'cs-uid', annotations: o.annotations ?? {} },
    spec: {
      replicas: o.replicas ?? 10,
      selector: { matchLabels: { app: 'web' } },
      template: template({ app: 'nginx:2', sidecar: 'busybox:1' }),
      updateStrategy: { type: o.type ?? 'InPlaceIfPossible', partition: o.partition ?? 5, ...(o.maxUnavailable !== undefined ? { maxUnavailable: o.maxUnavailable } : {}) },
    },
    status: { replicas: 10, readyReplicas: 10, updatedReplicas: 1, updatedReadyReplicas: o.ready ?? 1, currentRevision: o.current ?? 'web-old', updateRevision: o.update ?? 'web-new' },
  };
}

const oldRev = revision('web-old', template({ app: 'nginx:1', sidecar: 'busybox:1' }));
const newRev = revision('web-new', template({ app: 'nginx:2', sidecar: 'busybox:1' }));

function kindOf(d: Decision): string {
  return d.kind;
}

describe('pre-download rules', () => {
  it('creates one job per changed container, shaped as upstream does', () => {
    const { decision, warnings } = decide(fromCloneSet(cloneSet({ annotations: { 'apps.kruise.io/image-predownload-parallelism': '3', 'apps.kruise.io/image-predownload-timeout-seconds': '120' } })), newRev, oldRev);
    expect(warnings).toEqual([]);
    if (decision.kind !== 'create') throw new Error(decision.kind);
    expect(decision.jobs).toHaveLength(1);
    expect(decision.jobs[0]).toEqual({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: {
        name: 'web-new-app',
        namespace: 'ns',
        labels: { app: 'web', 'controller.kubernetes.io/hash': 'new' },
        ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs-uid', controller: true, blockOwnerDeletion: true }],
      },
      spec: {
        image: 'nginx:2',
        pullSecrets: ['regcred'],
        podSelector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'controller-revision-hash', operator: 'NotIn', values: ['web-new', 'new'] }] },
        parallelism: 3,
        pullPolicy: { backoffLimit: 1, timeoutSeconds: 120 },
        completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 600 },
        sandboxConfig: { labels: { app: 'web', 'controller.kubernetes.io/hash': 'new' }, annotations: { team: 'a' } },
      },
    });
  });

  it('creates a job for each of two changed containers, with default parallelism 1 and timeout 300', () => {
    const two = revision('web-new', template({ app: 'nginx:2', sidecar: 'busybox:2' }));
    const { decision } = decide(fromCloneSet(cloneSet()), two, oldRev);
    if (decision.kind !== 'create') throw new Error(decision.kind);
    expect(decision.jobs.map((j) => [j.metadata?.name, j.spec.image, j.spec.parallelism, j.spec.pullPolicy?.timeoutSeconds])).toEqual([
      ['web-new-app', 'nginx:2', 1, 300],
      ['web-new-sidecar', 'busybox:2', 1, 300],
    ]);
  });

  it.each([
    ['3 replicas', { replicas: 3 }, 'ignore'],
    ['4 replicas', { replicas: 4, partition: 1 }, 'create'],
    ['ReCreate', { type: 'ReCreate' as const }, 'ignore'],
    ['partition 0 and maxUnavailable >= replicas', { partition: 0, maxUnavailable: 10 }, 'ignore'],
    ['partition 0 and maxUnavailable 100%', { partition: 0, maxUnavailable: '100%' }, 'ignore'],
    ['partition 0 and the default 20%', { partition: 0 }, 'create'],
    ['partition 0 and maxUnavailable 9', { partition: 0, maxUnavailable: 9 }, 'create'],
    ['partition 50%', { partition: '50%', maxUnavailable: '100%' }, 'create'],
  ])('%s → %s', (_label, o, expected) => {
    expect(kindOf(decide(fromCloneSet(cloneSet(o)), newRev, oldRev).decision)).toBe(expected);
  });

  it('skips a change that is not in-place updatable', () => {
    const envChanged = revision('web-new', template({ app: 'nginx:2', sidecar: 'busybox:1' }, {}));
    envChanged.data = { spec: { template: { ...template({ app: 'nginx:2', sidecar: 'busybox:1' }), spec: { containers: [{ name: 'app', image: 'nginx:2', env: [{ name: 'A', value: '1' }] }, { name: 'sidecar', image: 'busybox:1' }] } } } };
    expect(decide(fromCloneSet(cloneSet()), envChanged, oldRev).decision).toEqual({ kind: 'ignore', reason: 'the change is not in-place updatable' });
    const metadataOnly = revision('web-new', { ...template({ app: 'nginx:1', sidecar: 'busybox:1' }), metadata: { labels: { app: 'web', v: '2' } } });
    expect(decide(fromCloneSet(cloneSet()), metadataOnly, oldRev).decision).toEqual({ kind: 'ignore', reason: 'no image changed' });
  });

  it('waits for min-updated-ready-pods, as a number or a percent rounded up', () => {
    const w = (ann: string, ready: number): string => kindOf(decide(fromCloneSet(cloneSet({ ready, annotations: { 'apps.kruise.io/image-predownload-min-updated-ready-pods': ann } })), newRev, oldRev).decision);
    expect(w('2', 1)).toBe('wait');
    expect(w('2', 2)).toBe('create');
    expect(w('15%', 1)).toBe('wait');
    expect(w('15%', 2)).toBe('create');
  });

  it('reports an invalid annotation and uses the default', () => {
    const { decision, warnings } = decide(fromCloneSet(cloneSet({ ready: 0, annotations: { 'apps.kruise.io/image-predownload-min-updated-ready-pods': 'lots', 'apps.kruise.io/image-predownload-parallelism': 'many' } })), newRev, oldRev);
    expect(decision.kind).toBe('create');
    expect(warnings).toEqual([
      'annotation apps.kruise.io/image-predownload-min-updated-ready-pods="lots" is neither a number nor a percent; using 0',
      'annotation apps.kruise.io/image-predownload-parallelism="many" is not a positive integer; using 1',
    ]);
  });

  it('does nothing twice for one rollout, finishes when revisions meet, and pre-downloads again on a return to an old revision (#1419)', () => {
    const created = revision('web-new', template({ app: 'nginx:2', sidecar: 'busybox:1' }), { 'apps.kruise.io/pre-predownload-created': 'true' }, { [ANNOTATION_PREDOWNLOAD_FROM]: 'web-old' });
    expect(decide(fromCloneSet(cloneSet()), created, oldRev).decision).toEqual({ kind: 'done' });
    const ignored = revision('web-new', template({ app: 'nginx:2', sidecar: 'busybox:1' }), { 'apps.kruise.io/image-predownload-ignored': 'true' });
    expect(decide(fromCloneSet(cloneSet()), ignored, oldRev).decision).toEqual({ kind: 'done' });
    expect(decide(fromCloneSet(cloneSet({ current: 'web-new', update: 'web-new' })), created, created).decision).toEqual({ kind: 'finished', markFinished: true });
    // Later the workload rolls from a third revision back to web-new: a new rollout, so again.
    const third = revision('web-third', template({ app: 'nginx:3', sidecar: 'busybox:1' }));
    expect(kindOf(decide(fromCloneSet(cloneSet({ current: 'web-third' })), created, third).decision)).toBe('create');
    // Or from web-old once more (web-new → web-old → web-new): the finished mark tells the rollouts apart.
    const closed = revision('web-new', template({ app: 'nginx:2', sidecar: 'busybox:1' }), { 'apps.kruise.io/pre-predownload-created': 'true' }, { [ANNOTATION_PREDOWNLOAD_FROM]: PREDOWNLOAD_FROM_FINISHED });
    expect(decide(fromCloneSet(cloneSet({ current: 'web-new', update: 'web-new' })), closed, closed).decision).toEqual({ kind: 'finished', markFinished: false });
    expect(kindOf(decide(fromCloneSet(cloneSet()), closed, oldRev).decision)).toBe('create');
    // A revision labelled by upstream (no record of the rollout) counts as done until its rollout ends.
    const upstream = revision('web-new', template({ app: 'nginx:2', sidecar: 'busybox:1' }), { 'apps.kruise.io/pre-predownload-created': 'true' });
    expect(decide(fromCloneSet(cloneSet()), upstream, oldRev).decision).toEqual({ kind: 'done' });
    expect(decide(fromCloneSet(cloneSet({ current: 'web-new', update: 'web-new' })), upstream, upstream).decision).toEqual({ kind: 'finished', markFinished: true });
    expect(decide(fromCloneSet(cloneSet({ current: 'web-new', update: 'web-new' })), oldRev, oldRev).decision).toEqual({ kind: 'finished', markFinished: false });
  });

  it('waits while revisions are unknown', () => {
    expect(kindOf(decide(fromCloneSet(cloneSet()), undefined, oldRev).decision)).toBe('wait');
  });

  it('reads Advanced StatefulSet rules: in-place only when asked, never OnDelete, integer partition, default maxUnavailable 1', () => {
    const sts = (policy: 'ReCreate' | 'InPlaceIfPossible' | undefined, partition: number, type: 'RollingUpdate' | 'OnDelete' = 'RollingUpdate', rollingUpdate = true): AdvancedStatefulSet => ({
      metadata: { name: 'db', namespace: 'ns', uid: 'sts-uid' },
      spec: {
        replicas: 5,
        selector: { matchLabels: { app: 'db' } },
        template: template({ app: 'nginx:2', sidecar: 'busybox:1' }),
        updateStrategy: { type, ...(rollingUpdate ? { rollingUpdate: { partition, ...(policy ? { podUpdatePolicy: policy } : {}) } } : {}) },
      },
      status: { replicas: 5, updatedReadyReplicas: 0, currentRevision: 'db-old', updateRevision: 'db-new' },
    });
    const w = fromStatefulSet(sts('InPlaceIfPossible', 0));
    expect([w.notInPlace, w.partition, w.maxUnavailable, w.apiVersion, w.kind]).toEqual([undefined, 0, 1, 'apps.kruise.io/v1beta1', 'StatefulSet']);
    const revs = [revision('db-new', template({ app: 'nginx:2', sidecar: 'busybox:1' })), revision('db-old', template({ app: 'nginx:1', sidecar: 'busybox:1' }))] as const;
    expect(decide(w, ...revs).decision.kind).toBe('create');
    expect(decide(fromStatefulSet(sts(undefined, 0)), ...revs).decision).toEqual({ kind: 'ignore', reason: 'pods are recreated (ReCreate), not updated in place' });
    expect(decide(fromStatefulSet(sts('InPlaceIfPossible', 0, 'RollingUpdate', false)), ...revs).decision).toEqual({ kind: 'ignore', reason: 'pods are recreated (ReCreate), not updated in place' });
    expect(decide(fromStatefulSet(sts('InPlaceIfPossible', 0, 'OnDelete')), ...revs).decision).toEqual({ kind: 'ignore', reason: 'updateStrategy is OnDelete: pods update only when someone deletes them' });
  });

  it('scales int-or-percent values as Kubernetes does', () => {
    expect([scaled('20%', 10, false), scaled('25%', 10, false), scaled('25%', 10, true), scaled(3, 10, true), scaled('7', 10, true), scaled('x', 10, true)]).toEqual([2, 2, 3, 3, 7, undefined]);
  });

  it('tells in-place image changes from other changes', () => {
    const a = template({ app: 'nginx:1' });
    expect(inPlaceImageChanges(a, template({ app: 'nginx:2' }))?.map((c) => c.name)).toEqual(['app']);
    expect(inPlaceImageChanges(a, template({ other: 'nginx:2' }))).toBeUndefined();
    expect(inPlaceImageChanges(a, { ...template({ app: 'nginx:1' }), spec: { containers: [{ name: 'app', image: 'nginx:1' }], nodeSelector: { x: 'y' } } })).toBeUndefined();
  });
});
