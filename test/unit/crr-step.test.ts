import { crrToV1beta1 } from '../../api/crr-conversion.js';
import { ANNOTATION_CRR_SYNC_CONTAINER_STATUSES, ANNOTATION_CRR_UNREADY_ACQUIRED } from '../../api/metadata-keys.js';
import { MESSAGE_CRR_CONTAINER_NOT_FOUND_ON_NODE, MESSAGE_CRR_DEADLINE_EXCEEDED } from '../../api/messages.js';
import type {
  ContainerRecreateRequest,
  ContainerRecreateRequestContainerRecreateState,
  ContainerRecreateRequestStrategy,
  ContainerRecreateRequestSyncContainerStatus,
} from '../../api/types/containerrecreaterequest.js';
import { newerResourceVersion } from '../../kube/resource-version.js';
import { pickCrr } from '../../daemon/crr/pick.js';
import { resolvePort } from '../../daemon/crr/prestop.js';
import { RuntimeLooks } from '../../daemon/crr/looks.js';
import { applyKillResults, KUBELET_REPORT_RECHECK_MS, planCrr, RECREATING_RECHECK_MS, type ObservedContainer, type Plan } from '../../daemon/crr/step.js';

const T0 = Date.parse('2026-01-01T10:00:00Z');
const at = (s: number): number => T0 + s * 1000;

interface CrrOptions {
  containers?: string[];
  strategy?: ContainerRecreateRequestStrategy;
  phase?: 'Pending' | 'Recreating' | 'Completed';
  states?: ContainerRecreateRequestContainerRecreateState[];
  annotations?: Record<string, string>;
  deadline?: number;
  created?: number;
  name?: string;
}

/** Written as a v1alpha1 client would (the manager's snapshot and moment in annotations), read as v1beta1. */
function crr(o: CrrOptions = {}): ContainerRecreateRequest {
  const names = o.containers ?? ['a'];
  return crrToV1beta1({
    metadata: { name: o.name ?? 'r', namespace: 'ns', creationTimestamp: new Date(at(o.created ?? 0)).toISOString(), annotations: o.annotations ?? {} },
    spec: {
      podName: 'p',
      containers: names.map((n) => ({ name: n, statusContext: { containerID: `containerd://${n}0`, restartCount: 0 } })),
      strategy: { failurePolicy: 'Fail', terminationGracePeriodSeconds: 5, ...o.strategy },
      ...(o.deadline !== undefined ? { activeDeadlineSeconds: o.deadline } : {}),
    },
    ...(o.phase !== undefined ? { status: { phase: o.phase, ...(o.states ? { containerRecreateStates: o.states } : {}) } } : {}),
  });
}

const original = (n: string): ObservedContainer => ({ id: `${n}0`, running: true, attempt: 0 });
const recreated = (n: string, startedAtMs = at(1)): ObservedContainer => ({ id: `${n}1`, running: true, attempt: 1, startedAtMs });
const exited = (n: string): ObservedContainer => ({ id: `${n}0`, running: false, attempt: 0 });
const synced = (...entries: ContainerRecreateRequestSyncContainerStatus[]): Record<string, string> => ({ [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]: JSON.stringify(entries) });
const readyEntry = (n: string, ready = true): ContainerRecreateRequestSyncContainerStatus => ({ name: n, ready, restartCount: 1, containerID: `containerd://${n}1` });

function plan(c: ContainerRecreateRequest, containers?: Record<string, ObservedContainer>, nowS = 1, runtimeName = 'containerd'): Plan {
  return planCrr({ crr: c, runtimeName, nowMs: at(nowS), ...(containers ? { containers: new Map(Object.entries(containers)) } : {}) });
}

function expectType<K extends Plan['type']>(p: Plan, type: K): Extract<Plan, { type: K }> {
  expect(p.type).toBe(type);
  return p as Extract<Plan, { type: K }>;
}

describe('planCrr: before touching containers', () => {
  it('asks for the runtime view first, without writing anything', () => {
    expect(plan(crr()).type).toBe('observe');
  });

  it('does nothing for a completed or deleting CRR', () => {
    expect(plan(crr({ phase: 'Completed' }), { a: original('a') }).type).toBe('wait');
    const deleting = crr();
    deleting.metadata = { ...deleting.metadata, deletionTimestamp: new Date(at(0)).toISOString() };
    expect(plan(deleting, { a: original('a') }).type).toBe('wait');
  });

  it('completes at the deadline with every unfinished container failed, and starts no kill after it', () => {
    const c = crr({ containers: ['a', 'b'], deadline: 10, phase: 'Recreating', states: [{ name: 'a', phase: 'Succeeded', isKilled: true }, { name: 'b', phase: 'Pending' }] });
    const p = expectType(plan(c, { a: recreated('a'), b: original('b') }, 10), 'complete');
    expect(p.status.phase).toBe('Completed');
    expect(p.status.message).toBe(MESSAGE_CRR_DEADLINE_EXCEEDED);
    expect(p.status.containerRecreateStates).toEqual([
      { name: 'a', phase: 'Succeeded', isKilled: true },
      { name: 'b', phase: 'Failed', message: MESSAGE_CRR_DEADLINE_EXCEEDED },
    ]);
    expect(p.status.completionTime).toBe('2026-01-01T10:00:10Z');
    expect(plan(c, { a: recreated('a'), b: original('b') }, 9.9).type).toBe('kill');
  });

  it('sees a stop begun before the deadline through, starting no other, and reports what it became', () => {
    const stopping = { name: 'a', phase: 'Recreating' as const, isKilled: true, message: 'stopping container a0 (grace 5s)' };
    const c = crr({ containers: ['a', 'b'], deadline: 3, phase: 'Recreating', states: [stopping, { name: 'b', phase: 'Pending' }] });
    expect(plan(c, undefined, 4).type).toBe('observe');
    // The old instance exited; the kubelet has not started the new one: look again, no kill of b.
    const waiting = plan(c, { a: exited('a'), b: original('b') }, 4);
    expect(waiting).toEqual({ type: 'wait', reason: 'stops begun before the deadline', requeueAfterMs: RECREATING_RECHECK_MS });
    // A new instance runs: recreated, whatever its readiness; b never began and fails with the deadline.
    const done = expectType(plan(c, { a: recreated('a', at(30)), b: original('b') }, 31), 'complete');
    expect(done.status.message).toBe(MESSAGE_CRR_DEADLINE_EXCEEDED);
    expect(done.status.containerRecreateStates).toEqual([
      { name: 'a', phase: 'Succeeded', isKilled: true },
      { name: 'b', phase: 'Failed', message: MESSAGE_CRR_DEADLINE_EXCEEDED },
    ]);
    // The old instance still runs after the stop ended (the daemon restarted during it): not
    // recreated, and not stopped again past the deadline.
    const gaveUp = expectType(plan(c, { a: original('a'), b: original('b') }, 31), 'complete');
    expect(gaveUp.status.containerRecreateStates?.[0]).toEqual({ name: 'a', phase: 'Failed', isKilled: true, message: MESSAGE_CRR_DEADLINE_EXCEEDED });
    // Without a stop in flight the deadline completes at once, as before.
    expect(plan(crr({ deadline: 3, phase: 'Recreating', states: [{ name: 'a', phase: 'Pending' }] }), undefined, 4).type).toBe('complete');
  });

  it('completes at once when the containers cannot be addressed through this runtime', () => {
    const noContext = crr();
    delete noContext.spec.containers[0]?.statusContext;
    expect(expectType(plan(noContext), 'complete').status.message).toMatch(/^failed to find runtime service: container a has no statusContext.containerID/);
    expect(expectType(plan(crr(), undefined, 1, 'cri-o'), 'complete').status.message).toMatch(/runs in runtime containerd, this node's runtime is cri-o/);
    const malformed = crr();
    malformed.spec.containers[0] = { name: 'a', statusContext: { containerID: 'abc', restartCount: 0 } };
    expect(expectType(plan(malformed), 'complete').status.message).toMatch(/malformed containerID abc/);
  });
});

describe('planCrr: unready grace', () => {
  const strategy = { unreadyGracePeriodSeconds: 10 };

  it('first says Recreating, so the manager takes the pod out of service', () => {
    const p = expectType(plan(crr({ strategy })), 'write');
    expect(p.status).toEqual({ phase: 'Recreating' });
    expect(expectType(plan(crr({ strategy, phase: 'Pending' })), 'write').status.phase).toBe('Recreating');
  });

  it('then waits, without a timer, for the manager to record when the pod became unready', () => {
    const p = expectType(plan(crr({ strategy, phase: 'Recreating' })), 'wait');
    expect(p.requeueAfterMs).toBeUndefined();
  });

  it('waits out the rest of the grace from that moment, then goes on', () => {
    const annotations = { [ANNOTATION_CRR_UNREADY_ACQUIRED]: '2026-01-01T10:00:02Z' };
    const waiting = expectType(plan(crr({ strategy, phase: 'Recreating', annotations }), undefined, 5), 'wait');
    expect(waiting.requeueAfterMs).toBe(7_100);
    expect(plan(crr({ strategy, phase: 'Recreating', annotations }), undefined, 12).type).toBe('observe');
    expect(plan(crr({ strategy, phase: 'Recreating', annotations }), { a: original('a') }, 12).type).toBe('kill');
  });

  it('waits for the manager when a v1alpha1 writer left a moment that cannot be read (the manager writes it again)', () => {
    expect(plan(crr({ strategy, phase: 'Recreating', annotations: { [ANNOTATION_CRR_UNREADY_ACQUIRED]: 'yesterday' } })).type).toBe('wait');
  });
});

describe('planCrr: one container', () => {
  it('records the stop intent (instance and grace) together with Recreating, in one write, then kills', () => {
    const p = expectType(plan(crr(), { a: original('a') }), 'kill');
    expect(p.status).toEqual({ phase: 'Recreating', containerRecreateStates: [{ name: 'a', phase: 'Recreating', isKilled: true, message: 'stopping container a0 (grace 5s)' }] });
    expect(p.kills).toEqual([expect.objectContaining({ name: 'a', containerId: 'a0', graceSeconds: 5 })]);
  });

  it('takes the default grace of 30 s when neither the CRR nor the pod gave one', () => {
    const c = crr();
    delete c.spec.strategy?.terminationGracePeriodSeconds;
    expect(expectType(plan(c, { a: original('a') }), 'kill').kills[0]?.graceSeconds).toBe(30);
  });

  it('resumes a stop of the same instance that a daemon restart interrupted', () => {
    const c = crr({ phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true, message: 'stopping container a0 (grace 5s)' }] });
    const p = expectType(plan(c, { a: original('a') }), 'kill');
    expect(p.kills.map((k) => k.containerId)).toEqual(['a0']);
  });

  it('never stops the instance that replaced the one it stopped', () => {
    const stopping = crr({ phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true, message: 'stopping container a0 (grace 5s)' }] });
    // The record stays as it was: no write just because the stop finished.
    expect(plan(stopping, { a: recreated('a') }).type).toBe('wait');
    expect(plan(stopping, { a: exited('a') }).type).toBe('wait');
    const forced = crr({ strategy: { forceRecreate: true }, phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true, message: 'stopping container a1 (grace 5s)' }] });
    expect(plan(forced, { a: { id: 'a2', running: true, attempt: 2, startedAtMs: at(1) } }).type).not.toBe('kill');
    // Even when the manager still reports the stopped instance as ready, it is not the recreated one.
    const stale = crr({ strategy: { forceRecreate: true }, phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true, message: 'stopping container a1 (grace 5s)' }], annotations: synced(readyEntry('a')) });
    expect(plan(stale, { a: { id: 'a1', running: false, attempt: 1 } }).type).toBe('wait');
  });

  it('waits for the kubelet to report the container back, which reaches it as a CRR update', () => {
    const c = crr({ phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true }] });
    // The timer only covers an update that never came.
    expect(expectType(plan(c, { a: exited('a') }), 'wait').requeueAfterMs).toBe(KUBELET_REPORT_RECHECK_MS);
    expect(expectType(plan(c, { a: recreated('a') }), 'wait').requeueAfterMs).toBe(KUBELET_REPORT_RECHECK_MS);
    // With a deadline it looks again once the deadline passed, when a stop's outcome is reported
    // without waiting for the kubelet.
    const bounded = crr({ deadline: 10, phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true }] });
    expect(expectType(plan(bounded, { a: recreated('a') }, 4), 'wait').requeueAfterMs).toBe(6_100);
    expect(expectType(plan(bounded, { a: recreated('a') }, 10), 'complete').status.containerRecreateStates).toEqual([{ name: 'a', phase: 'Succeeded', isKilled: true }]);
  });

  it('stays Recreating until the manager reports the new instance ready', () => {
    const killed: ContainerRecreateRequestContainerRecreateState[] = [{ name: 'a', phase: 'Recreating', isKilled: true }];
    expect(plan(crr({ phase: 'Recreating', states: killed }), { a: recreated('a') }).type).toBe('wait');
    const notReady = crr({ phase: 'Recreating', states: killed, annotations: synced(readyEntry('a', false)) });
    expect(plan(notReady, { a: recreated('a') }).type).toBe('wait');
    // A snapshot of another instance (an older one) does not count.
    const stale = crr({ phase: 'Recreating', states: killed, annotations: synced({ name: 'a', ready: true, restartCount: 0, containerID: 'containerd://a0' }) });
    expect(plan(stale, { a: recreated('a') }).type).toBe('wait');
  });

  it('completes with the container Succeeded once the new instance is ready', () => {
    const c = crr({ phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true }], annotations: synced(readyEntry('a')) });
    const p = expectType(plan(c, { a: recreated('a') }, 3), 'complete');
    expect(p.status).toEqual({
      phase: 'Completed',
      completionTime: '2026-01-01T10:00:03Z',
      containerRecreateStates: [{ name: 'a', phase: 'Succeeded', isKilled: true }],
      // The manager's last snapshot stays: it shows which instance counted as recreated.
      containerStatusSnapshot: [readyEntry('a')],
    });
  });

  it('holds success back until the new instance has run minStartedSeconds', () => {
    const c = crr({ strategy: { minStartedSeconds: 10 }, phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true }], annotations: synced(readyEntry('a')) });
    const early = expectType(plan(c, { a: recreated('a', at(2)) }, 5), 'wait');
    expect(early.requeueAfterMs).toBe(7_100);
    expect(plan(c, { a: recreated('a', at(2)) }, 12).type).toBe('complete');
    // Unknown start time: look again soon rather than guess.
    expect(expectType(plan(c, { a: { id: 'a1', running: true, attempt: 1 } }, 12), 'wait').requeueAfterMs).toBe(1_000);
  });

  it('treats a container recreated by someone else since the CRR was made as done, without a kill', () => {
    const c = crr({ phase: 'Recreating', annotations: synced(readyEntry('a')) });
    const p = expectType(plan(c, { a: recreated('a') }), 'complete');
    expect(p.status.containerRecreateStates).toEqual([{ name: 'a', phase: 'Succeeded' }]);
    // A restart count above the snapshot's means the same, even with an unchanged id.
    expect(plan(crr(), { a: { id: 'a0', running: true, attempt: 1 } }).type).toBe('write');
  });

  it('kills it anyway with forceRecreate, exactly once', () => {
    const c = crr({ strategy: { forceRecreate: true }, annotations: synced(readyEntry('a')) });
    const p = expectType(plan(c, { a: recreated('a') }), 'kill');
    expect(p.kills.map((k) => k.containerId)).toEqual(['a1']);
    const after = crr({ strategy: { forceRecreate: true }, phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true, message: 'stopping container a1 (grace 5s)' }], annotations: synced(readyEntry('a')) });
    expect(plan(after, { a: { id: 'a1', running: false, attempt: 1 } }).type).toBe('wait');
    const replacement: ObservedContainer = { id: 'a2', running: true, attempt: 2, startedAtMs: at(2) };
    expect(plan(after, { a: replacement }).type).toBe('wait');
    const back = crrToV1beta1({ ...after, metadata: { ...after.metadata, annotations: synced({ name: 'a', ready: true, restartCount: 2, containerID: 'containerd://a2' }) } });
    expect(expectType(plan(back, { a: replacement }), 'complete').status.containerRecreateStates).toEqual([{ name: 'a', phase: 'Succeeded', isKilled: true }]);
  });

  it('says when the container is not on the node, and waits', () => {
    const p = expectType(plan(crr(), {}), 'write');
    expect(p.status.containerRecreateStates).toEqual([{ name: 'a', phase: 'Pending', message: MESSAGE_CRR_CONTAINER_NOT_FOUND_ON_NODE }]);
    const again = crr({ phase: 'Recreating', states: p.status.containerRecreateStates ?? [] });
    expect(expectType(plan(again, {}), 'wait').requeueAfterMs).toBe(RECREATING_RECHECK_MS);
  });
});

describe('planCrr: several containers', () => {
  const three = ['a', 'b', 'c'];

  it('unordered with Ignore: stops every container at once', () => {
    const p = expectType(plan(crr({ containers: three, strategy: { failurePolicy: 'Ignore' } }), { a: original('a'), b: original('b'), c: original('c') }), 'kill');
    expect(p.kills.map((k) => k.name)).toEqual(['a', 'b', 'c']);
    expect(p.status.containerRecreateStates?.every((s) => s.isKilled === true && s.phase === 'Recreating')).toBe(true);
  });

  it('unordered with Fail: one stop at a time, not waiting for the container to come back', () => {
    const p = expectType(plan(crr({ containers: three }), { a: original('a'), b: original('b'), c: original('c') }), 'kill');
    expect(p.kills.map((k) => k.name)).toEqual(['a']);
    const next = crr({ containers: three, phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true }] });
    expect(expectType(plan(next, { a: exited('a'), b: original('b'), c: original('c') }), 'kill').kills.map((k) => k.name)).toEqual(['b']);
  });

  it('ordered: the next container only once the previous one is back', () => {
    const strategy = { orderedRecreate: true, failurePolicy: 'Ignore' as const };
    const first = expectType(plan(crr({ containers: three, strategy }), { a: original('a'), b: original('b'), c: original('c') }), 'kill');
    expect(first.kills.map((k) => k.name)).toEqual(['a']);
    const waiting = crr({ containers: three, strategy, phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true }, { name: 'b', phase: 'Pending' }, { name: 'c', phase: 'Pending' }] });
    expect(plan(waiting, { a: recreated('a'), b: original('b'), c: original('c') }).type).toBe('wait');
    const back = crrToV1beta1({ ...waiting, metadata: { ...waiting.metadata, annotations: synced(readyEntry('a')) } });
    const second = expectType(plan(back, { a: recreated('a'), b: original('b'), c: original('c') }), 'kill');
    expect(second.kills.map((k) => k.name)).toEqual(['b']);
    expect(second.status.containerRecreateStates?.[0]).toEqual({ name: 'a', phase: 'Succeeded', isKilled: true });
  });

  it('Fail: the first failure completes the CRR and abandons the containers after it', () => {
    const c = crr({ containers: three, phase: 'Recreating', states: [{ name: 'a', phase: 'Failed', message: 'kill container error: boom' }, { name: 'b', phase: 'Pending' }, { name: 'c', phase: 'Pending' }] });
    const p = expectType(plan(c, { a: original('a'), b: original('b'), c: original('c') }), 'complete');
    expect(p.status.message).toBe('containers not recreated: a, b, c');
    expect(p.status.containerRecreateStates).toEqual([
      { name: 'a', phase: 'Failed', message: 'kill container error: boom' },
      { name: 'b', phase: 'Failed', message: 'abandoned: container a failed and failurePolicy is Fail' },
      { name: 'c', phase: 'Failed', message: 'abandoned: container a failed and failurePolicy is Fail' },
    ]);
  });

  it('Ignore: goes on past a failure and completes naming the failed container', () => {
    const strategy = { failurePolicy: 'Ignore' as const, orderedRecreate: true };
    const c = crr({ containers: ['a', 'b'], strategy, phase: 'Recreating', states: [{ name: 'a', phase: 'Failed', message: 'kill container error: boom' }, { name: 'b', phase: 'Pending' }] });
    expect(expectType(plan(c, { a: original('a'), b: original('b') }), 'kill').kills.map((k) => k.name)).toEqual(['b']);
    const done = crr({ containers: ['a', 'b'], strategy, phase: 'Recreating', states: [{ name: 'a', phase: 'Failed', message: 'kill container error: boom' }, { name: 'b', phase: 'Recreating', isKilled: true }], annotations: synced(readyEntry('b')) });
    const p = expectType(plan(done, { a: original('a'), b: recreated('b') }), 'complete');
    expect(p.status.message).toBe('containers not recreated: a');
    expect(p.status.containerRecreateStates?.map((s) => s.phase)).toEqual(['Failed', 'Succeeded']);
  });

  it('unordered: a container missing on the node does not hold the others back', () => {
    const p = expectType(plan(crr({ containers: ['a', 'b'], strategy: { failurePolicy: 'Ignore' } }), { b: original('b') }), 'kill');
    expect(p.kills.map((k) => k.name)).toEqual(['b']);
    expect(p.status.containerRecreateStates?.[0]).toEqual({ name: 'a', phase: 'Pending', message: MESSAGE_CRR_CONTAINER_NOT_FOUND_ON_NODE });
    // Ordered: it does.
    expect(plan(crr({ containers: ['a', 'b'], strategy: { orderedRecreate: true } }), { b: original('b') }).type).toBe('write');
  });

  it('writes nothing when nothing changed', () => {
    const c = crr({ containers: ['a', 'b'], phase: 'Recreating', states: [{ name: 'a', phase: 'Recreating', isKilled: true }, { name: 'b', phase: 'Recreating', isKilled: true }] });
    expect(plan(c, { a: exited('a'), b: exited('b') }).type).toBe('wait');
  });
});

describe('applyKillResults', () => {
  it('leaves stopped containers as recorded (no write) and marks failed ones Failed with the error', () => {
    const status = { phase: 'Recreating' as const, containerRecreateStates: [
      { name: 'a', phase: 'Recreating' as const, isKilled: true, message: 'stopping container a0 (grace 5s)' },
      { name: 'b', phase: 'Recreating' as const, isKilled: true, message: 'stopping container b0 (grace 5s)' },
      { name: 'c', phase: 'Succeeded' as const },
    ] };
    expect(applyKillResults(status, new Map([['a', undefined], ['b', 'StopContainer: deadline: timed out']])).containerRecreateStates).toEqual([
      { name: 'a', phase: 'Recreating', isKilled: true, message: 'stopping container a0 (grace 5s)' },
      { name: 'b', phase: 'Failed', message: 'kill container error: StopContainer: deadline: timed out' },
      { name: 'c', phase: 'Succeeded' },
    ]);
  });
});

describe('pickCrr', () => {
  const c = (name: string, created: number, phase?: 'Pending' | 'Recreating' | 'Completed'): ContainerRecreateRequest => crr({ name, created, ...(phase ? { phase } : {}) });

  it('runs the one under way first, then the oldest; the others without a phase become Pending', () => {
    const p = pickCrr([c('new', 3), c('old', 1), c('running', 2, 'Recreating'), c('queued', 0, 'Pending')]);
    expect(p.current?.metadata?.name).toBe('running');
    expect(p.toPending.map((x) => x.metadata?.name)).toEqual(['old', 'new']);
  });

  it('starts the next one as soon as the previous one completed', () => {
    const p = pickCrr([c('done', 0, 'Completed'), c('queued', 1, 'Pending'), c('later', 2)]);
    expect(p.current?.metadata?.name).toBe('queued');
    expect(p.toPending.map((x) => x.metadata?.name)).toEqual(['later']);
  });

  it('skips CRRs being deleted, and has nothing to do without eligible CRRs', () => {
    const deleting = c('deleting', 0);
    deleting.metadata = { ...deleting.metadata, deletionTimestamp: new Date().toISOString() };
    expect(pickCrr([deleting, c('done', 1, 'Completed')])).toEqual({ toPending: [] });
  });

  it('breaks ties by name', () => {
    expect(pickCrr([c('b', 1), c('a', 1)]).current?.metadata?.name).toBe('a');
  });
});

describe('helpers', () => {
  it('compares resourceVersions as revisions, never trusting opaque ones', () => {
    expect(newerResourceVersion('10', '9')).toBe(true);
    expect(newerResourceVersion('9', '10')).toBe(false);
    expect(newerResourceVersion('10', '10')).toBe(false);
    expect(newerResourceVersion('x', '1')).toBe(false);
    expect(newerResourceVersion(undefined, '1')).toBe(false);
  });

  it('resolves hook ports by number or by the container port name', () => {
    const ports = [{ name: 'http', containerPort: 8080 }];
    expect(resolvePort(80, ports)).toBe(80);
    expect(resolvePort('81', ports)).toBe(81);
    expect(resolvePort('http', ports)).toBe(8080);
    expect(resolvePort('grpc', ports)).toBeUndefined();
    expect(resolvePort(0, ports)).toBeUndefined();
  });
});

describe('RuntimeLooks', () => {
  const wait: Plan = { type: 'wait', reason: 'containers recreating', requeueAfterMs: 30_000 };

  it('holds off a second look at the same version until the wait planned on it is over', () => {
    const looks = new RuntimeLooks();
    looks.planned('ns/r', '7', wait, at(0));
    // The echo of the daemon's own write: same version, nothing new to see.
    expect(looks.pendingMs('ns/r', '7', at(1))).toBe(29_000);
    // The manager's report is a new version; the timer's moment is due.
    expect(looks.pendingMs('ns/r', '8', at(1))).toBeUndefined();
    expect(looks.pendingMs('ns/r', '7', at(30))).toBeUndefined();
    expect(looks.pendingMs('ns/other', '7', at(1))).toBeUndefined();
    looks.forget('ns/r');
    expect(looks.pendingMs('ns/r', '7', at(1))).toBeUndefined();
  });

  it('holds off nothing after a plan that acts, or waits without a timer', () => {
    const looks = new RuntimeLooks();
    looks.planned('ns/r', '7', wait, at(0));
    looks.planned('ns/r', '7', { type: 'write', status: { phase: 'Recreating' }, reason: 'container states changed' }, at(0));
    expect(looks.pendingMs('ns/r', '7', at(1))).toBeUndefined();
    looks.planned('ns/r', '7', { type: 'wait', reason: 'unready grace: waiting for the manager' }, at(0));
    expect(looks.pendingMs('ns/r', '7', at(1))).toBeUndefined();
  });
});
