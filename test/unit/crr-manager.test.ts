import type { Pod, PodCondition } from '../../api/types/core.js';
import { crrToV1beta1 } from '../../api/crr-conversion.js';
import {
  ANNOTATION_CRR_SYNC_CONTAINER_STATUSES,
  ANNOTATION_CRR_UNREADY_ACQUIRED,
  FINALIZER_CRR_UNREADY_ACQUIRED,
  LABEL_CRR_ACTIVE,
  LABEL_CRR_POD_UID,
} from '../../api/metadata-keys.js';
import { MESSAGE_CRR_DAEMON_NOT_RESPONDED, MESSAGE_CRR_DEADLINE_EXCEEDED, MESSAGE_CRR_POD_GONE } from '../../api/messages.js';
import type { ContainerRecreateRequest, ContainerRecreateRequestStatus } from '../../api/types/containerrecreaterequest.js';
import { planCrrManager, recreatedContainerStatuses, type ManagerPlan } from '../../manager/crr/plan.js';
import { addHolder, crrHolder, holdersOf, removeHolder } from '../../manager/crr/readiness.js';

/** A value the code under test must have produced. */
function defined<T>(v: T | undefined): T {
  if (v === undefined) throw new Error('expected a value');
  return v;
}

const T0 = Date.parse('2026-01-01T10:00:00Z');
const at = (s: number): number => T0 + s * 1000;
const iso = (s: number): string => new Date(at(s)).toISOString().replace('.000Z', 'Z');

interface CrrOptions {
  status?: ContainerRecreateRequestStatus;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deleting?: boolean;
  deadline?: number;
  ttl?: number;
  unready?: number;
}

/** Written as a v1alpha1 client would (snapshot and moment in annotations), read as v1beta1. */
function crr(o: CrrOptions = {}): ContainerRecreateRequest {
  return crrToV1beta1({
    metadata: {
      name: 'r',
      namespace: 'ns',
      creationTimestamp: iso(0),
      labels: { [LABEL_CRR_POD_UID]: 'uid-1', [LABEL_CRR_ACTIVE]: 'true', ...o.labels },
      annotations: o.annotations ?? {},
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.deleting ? { deletionTimestamp: iso(5) } : {}),
    },
    spec: {
      podName: 'p',
      containers: [{ name: 'a', statusContext: { containerID: 'containerd://a0', restartCount: 0 } }, { name: 'b', statusContext: { containerID: 'containerd://b0', restartCount: 0 } }],
      strategy: { ...(o.unready !== undefined ? { unreadyGracePeriodSeconds: o.unready } : {}) },
      ...(o.deadline !== undefined ? { activeDeadlineSeconds: o.deadline } : {}),
      ...(o.ttl !== undefined ? { ttlSecondsAfterFinished: o.ttl } : {}),
    },
    ...(o.status ? { status: o.status } : {}),
  });
}

function pod(o: { uid?: string; gate?: boolean; conditions?: PodCondition[]; deleting?: boolean; started?: Record<string, number> } = {}): Pod {
  const started = o.started ?? {};
  return {
    metadata: { name: 'p', namespace: 'ns', uid: o.uid ?? 'uid-1', ...(o.deleting ? { deletionTimestamp: new Date(at(3)).toISOString() } : {}) },
    spec: { containers: [{ name: 'a' }, { name: 'b' }], ...(o.gate ? { readinessGates: [{ conditionType: 'KruisePodReady' }] } : {}) },
    status: {
      conditions: o.conditions ?? [
        { type: 'ContainersReady', status: 'True' },
        { type: 'Ready', status: 'True' },
        ...(o.gate ? [{ type: 'KruisePodReady', status: 'True' }] : []),
      ],
      containerStatuses: ['a', 'b'].map((n) => ({
        name: n,
        image: 'busybox',
        imageID: '',
        ready: true,
        restartCount: started[n] !== undefined ? 1 : 0,
        containerID: started[n] !== undefined ? `containerd://${n}1` : `containerd://${n}0`,
        state: { running: { startedAt: iso(started[n] ?? -100) } },
      })),
    },
  };
}

const recreating: ContainerRecreateRequestStatus = { phase: 'Recreating' };
const completed: ContainerRecreateRequestStatus = { phase: 'Completed', completionTime: iso(10), containerRecreateStates: [{ name: 'a', phase: 'Succeeded' }, { name: 'b', phase: 'Succeeded' }] };
const plan = (c: ContainerRecreateRequest, p: Pod | undefined, nowS = 1): ManagerPlan => planCrrManager(c, p, at(nowS));
const emptySync = { [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]: '[]' };

describe('manager plan: running CRRs', () => {
  it('completes a CRR whose pod is gone, deleting or replaced, marking unfinished containers Failed', () => {
    for (const p of [undefined, pod({ deleting: true }), pod({ uid: 'uid-2' })]) {
      const out = plan(crr({ status: { phase: 'Recreating', containerRecreateStates: [{ name: 'a', phase: 'Succeeded' }] } }), p);
      expect(out.type).toBe('complete');
      if (out.type !== 'complete') continue;
      expect(out.status.message).toBe(MESSAGE_CRR_POD_GONE);
      expect(out.status.containerRecreateStates).toEqual([{ name: 'a', phase: 'Succeeded' }, { name: 'b', phase: 'Failed', message: MESSAGE_CRR_POD_GONE }]);
    }
  });

  it('completes a CRR no daemon answered within a minute, and waits until then', () => {
    const early = plan(crr(), pod(), 30);
    expect(early).toEqual({ type: 'done', requeueAfterMs: 30_100 });
    const late = plan(crr(), pod(), 60);
    expect(late.type === 'complete' && late.status.message).toBe(MESSAGE_CRR_DAEMON_NOT_RESPONDED);
    // Pending: a daemon answered and the CRR waits for its turn.
    expect(plan(crr({ status: { phase: 'Pending' } }), pod(), 600)).toEqual({ type: 'done' });
  });

  it('completes at activeDeadlineSeconds, Pending CRRs included, with every unfinished container Failed', () => {
    expect(plan(crr({ deadline: 20, status: { phase: 'Pending' } }), pod(), 5)).toEqual({ type: 'done', requeueAfterMs: 15_100 });
    const out = plan(crr({ deadline: 20, status: { phase: 'Recreating', containerRecreateStates: [{ name: 'a', phase: 'Pending' }] } }), pod(), 20);
    expect(out.type).toBe('complete');
    if (out.type !== 'complete') return;
    expect(out.status).toEqual({
      phase: 'Completed',
      completionTime: iso(20),
      message: MESSAGE_CRR_DEADLINE_EXCEEDED,
      containerRecreateStates: [
        { name: 'a', phase: 'Failed', message: MESSAGE_CRR_DEADLINE_EXCEEDED },
        { name: 'b', phase: 'Failed', message: MESSAGE_CRR_DEADLINE_EXCEEDED },
      ],
    });
  });

  it('past the deadline waits for the report of a stop the daemon began, up to the stop grace, the runtime timeout and the response time', () => {
    const inFlight = crr({ deadline: 20, annotations: emptySync, status: { phase: 'Recreating', containerRecreateStates: [{ name: 'a', phase: 'Recreating', isKilled: true }] } });
    inFlight.spec.strategy = { ...inFlight.spec.strategy, terminationGracePeriodSeconds: 30 };
    // 20 s deadline + 30 s grace + 2 s smallest stop grace + 120 s for the runtime to answer + 60 s response time.
    expect(plan(inFlight, pod(), 20)).toEqual({ type: 'done', requeueAfterMs: 212_100 });
    expect(plan(inFlight, pod(), 231).type).toBe('done');
    const late = plan(inFlight, pod(), 232);
    expect(late.type === 'complete' && late.status.containerRecreateStates?.[0]).toEqual({ name: 'a', phase: 'Failed', message: MESSAGE_CRR_DEADLINE_EXCEEDED, isKilled: true });
  });

  it('feeds the daemon the containers started since the CRR was created', () => {
    // Nothing recreated yet: no write of an empty snapshot, which would only wake the daemon.
    expect(plan(crr({ status: recreating }), pod())).toEqual({ type: 'done' });
    const out = plan(crr({ status: recreating, annotations: emptySync }), pod({ started: { b: 2 } }));
    expect(out).toEqual({ type: 'syncStatuses', value: [{ name: 'b', ready: true, restartCount: 1, containerID: 'containerd://b1' }] });
    expect(plan(crr({ status: recreating, annotations: emptySync }), pod())).toEqual({ type: 'done' });
    // A recreated container that stopped running again leaves the snapshot: the daemon must not count it.
    const reported = { [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]: JSON.stringify([{ name: 'b', ready: true, restartCount: 1, containerID: 'containerd://b1' }]) };
    expect(plan(crr({ status: recreating, annotations: reported }), pod())).toEqual({ type: 'syncStatuses', value: [] });
  });

  it('does not sync before the daemon says Recreating', () => {
    expect(plan(crr({ status: { phase: 'Pending' } }), pod({ started: { a: 2 } }))).toEqual({ type: 'done' });
  });

  it('unready grace with the readiness gate: finalizer first, then the pod, then the moment', () => {
    const gated = pod({ gate: true });
    expect(plan(crr({ unready: 5, status: recreating, annotations: emptySync }), gated)).toEqual({ type: 'addFinalizer' });
    const withFinalizer = crr({ unready: 5, status: recreating, annotations: emptySync, finalizers: [FINALIZER_CRR_UNREADY_ACQUIRED] });
    expect(plan(withFinalizer, gated)).toEqual({ type: 'holdPod' });
    const held = { ...gated, status: defined(addHolder(gated, crrHolder('ns', 'r'), new Date(at(1)))) };
    expect(plan(withFinalizer, held, 2)).toEqual({ type: 'markUnreadyAcquired', value: iso(2) });
    const acquired = crr({ unready: 5, status: recreating, annotations: { ...emptySync, [ANNOTATION_CRR_UNREADY_ACQUIRED]: iso(2) }, finalizers: [FINALIZER_CRR_UNREADY_ACQUIRED] });
    expect(plan(acquired, held, 3)).toEqual({ type: 'done' });
  });

  it('unready grace without the gate: only the moment (the grace is a plain delay)', () => {
    expect(plan(crr({ unready: 5, status: recreating, annotations: emptySync }), pod(), 2)).toEqual({ type: 'markUnreadyAcquired', value: iso(2) });
  });
});

describe('manager plan: finished and deleted CRRs', () => {
  const gated = pod({ gate: true });
  const held = { ...gated, status: defined(addHolder(gated, crrHolder('ns', 'r'), new Date(at(1)))) };

  it('gives the pod its readiness back before removing the finalizer, on completion', () => {
    const done = crr({ status: completed, finalizers: [FINALIZER_CRR_UNREADY_ACQUIRED] });
    expect(plan(done, held, 11)).toEqual({ type: 'releasePod' });
    expect(plan(done, gated, 11)).toEqual({ type: 'removeFinalizer' });
  });

  it('and when the CRR is deleted mid-way', () => {
    const deleted = crr({ status: recreating, deleting: true, finalizers: [FINALIZER_CRR_UNREADY_ACQUIRED] });
    expect(plan(deleted, held, 6)).toEqual({ type: 'releasePod' });
    expect(plan(deleted, gated, 6)).toEqual({ type: 'removeFinalizer' });
    expect(plan(crr({ deleting: true }), held, 6)).toEqual({ type: 'done' });
  });

  it('only removes the finalizer when the pod is gone or replaced', () => {
    const done = crr({ status: completed, finalizers: [FINALIZER_CRR_UNREADY_ACQUIRED] });
    expect(plan(done, undefined, 11)).toEqual({ type: 'removeFinalizer' });
    expect(plan(done, { ...held, metadata: { ...held.metadata, uid: 'uid-2' } }, 11)).toEqual({ type: 'removeFinalizer' });
  });

  it('removes the active label, then deletes after ttlSecondsAfterFinished', () => {
    expect(plan(crr({ status: completed, ttl: 5 }), pod(), 11)).toEqual({ type: 'removeActiveLabel' });
    const inactive = crr({ status: completed, ttl: 5, labels: {} });
    delete inactive.metadata?.labels?.[LABEL_CRR_ACTIVE];
    expect(plan(inactive, pod(), 12)).toEqual({ type: 'done', requeueAfterMs: 3_100 });
    expect(plan(inactive, pod(), 15)).toEqual({ type: 'delete' });
    const noTtl = crr({ status: completed });
    delete noTtl.metadata?.labels?.[LABEL_CRR_ACTIVE];
    expect(plan(noTtl, undefined, 1000)).toEqual({ type: 'done' });
  });
});

describe('pod readiness holders', () => {
  const gated = pod({ gate: true });
  const holder = crrHolder('ns', 'r');

  it('holding makes KruisePodReady and Ready False with the holder in the message', () => {
    const status = addHolder(gated, holder, new Date(at(1)));
    const cond = (t: string): PodCondition | undefined => status?.conditions?.find((c) => c.type === t);
    expect(cond('KruisePodReady')).toMatchObject({ status: 'False', message: '[{"userAgent":"ContainerRecreateRequest","key":"ns/r"}]', lastTransitionTime: iso(1) });
    expect(cond('Ready')).toMatchObject({ status: 'False', reason: 'ReadinessGatesNotReady' });
    expect(cond('ContainersReady')?.status).toBe('True');
    expect(addHolder({ ...gated, status: defined(status) }, holder, new Date(at(2)))).toBeUndefined();
  });

  it('keeps holders sorted and the pod not ready until the last one lets go', () => {
    const a = addHolder(gated, crrHolder('ns', 'z'), new Date(at(1)));
    const b = addHolder({ ...gated, status: defined(a) }, holder, new Date(at(2)));
    expect(holdersOf({ ...gated, status: defined(b) }).map((h) => h.key)).toEqual(['ns/r', 'ns/z']);
    const c = removeHolder({ ...gated, status: defined(b) }, holder, new Date(at(3)));
    expect(c?.conditions?.find((x) => x.type === 'Ready')?.status).toBe('False');
    const d = removeHolder({ ...gated, status: defined(c) }, crrHolder('ns', 'z'), new Date(at(4)));
    expect(d?.conditions?.find((x) => x.type === 'KruisePodReady')).toEqual({ type: 'KruisePodReady', status: 'True', lastTransitionTime: iso(4) });
    expect(d?.conditions?.find((x) => x.type === 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: iso(4) });
    expect(removeHolder({ ...gated, status: defined(d) }, holder, new Date(at(5)))).toBeUndefined();
  });

  it('leaves Ready to the kubelet while the containers themselves are not ready', () => {
    const notReady = pod({ gate: true, conditions: [{ type: 'ContainersReady', status: 'False' }, { type: 'Ready', status: 'False', reason: 'ContainersNotReady' }, { type: 'KruisePodReady', status: 'False', message: '[{"userAgent":"ContainerRecreateRequest","key":"ns/r"}]' }] });
    const status = removeHolder(notReady, holder, new Date(at(1)));
    expect(status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
    expect(status?.conditions?.find((c) => c.type === 'KruisePodReady')?.status).toBe('True');
  });

  it('adds the gate condition when the pod has none yet', () => {
    const bare = pod({ gate: true, conditions: [{ type: 'ContainersReady', status: 'True' }, { type: 'Ready', status: 'False' }] });
    expect(addHolder(bare, holder, new Date(at(1)))?.conditions?.map((c) => c.type)).toEqual(['ContainersReady', 'Ready', 'KruisePodReady']);
  });
});

describe('recreatedContainerStatuses', () => {
  it('reports only running containers started at or after the CRR, in spec order', () => {
    expect(recreatedContainerStatuses(crr(), pod({ started: { b: 0, a: 3 } }))).toEqual([
      { name: 'a', ready: true, restartCount: 1, containerID: 'containerd://a1' },
      { name: 'b', ready: true, restartCount: 1, containerID: 'containerd://b1' },
    ]);
    const waiting = pod();
    const first = waiting.status?.containerStatuses?.[0];
    if (first) first.state = { waiting: { reason: 'CrashLoopBackOff' } };
    expect(recreatedContainerStatuses(crr(), waiting)).toEqual([]);
  });
});
