// The daemon's CRR decisions as one pure function: the CRR as stored, what the runtime shows of the
// pod's containers and the time in, the next thing to do out. The executor persists what a plan
// says before it acts (a stop's record, except with forceRecreate, beside it: the replacement's new
// container ID already shows the stop was done), so a daemon restarted at any moment plans again
// from the stored status and the runtime.
import {
  completedCrrStatus,
  crrCreatedMs,
  crrStopGraceSeconds,
  crrStopsInFlight,
  isCrrContainerFinished,
  isCrrCompleted,
  syncedContainerStatuses,
} from '../../api/crr-status.js';
import {
  CRR_FAILURE_POLICY_IGNORE,
  CRR_PHASE_FAILED,
  CRR_PHASE_PENDING,
  CRR_PHASE_RECREATING,
  CRR_PHASE_SUCCEEDED,
} from '../../api/enums.js';
import {
  crrAbandonedMessage,
  crrFailedContainersMessage,
  crrKillErrorMessage,
  crrRuntimeNotFoundMessage,
  crrStoppingMessage,
  crrStopRecord,
  MESSAGE_CRR_CONTAINER_NOT_FOUND_ON_NODE,
  MESSAGE_CRR_DEADLINE_EXCEEDED,
} from '../../api/messages.js';
import { unreadyAcquiredAt } from '../../api/crr-conversion.js';
import type {
  ContainerRecreateRequest,
  ContainerRecreateRequestContainer,
  ContainerRecreateRequestContainerRecreateState as ContainerState,
  ContainerRecreateRequestStatus,
  ContainerRecreateRequestSyncContainerStatus,
} from '../../api/types/containerrecreaterequest.js';

/** The newest runtime instance of one pod container. */
export interface ObservedContainer {
  /** CRI id, without the "<runtime>://" prefix. */
  id: string;
  running: boolean;
  /** The kubelet's attempt number, which is its restartCount. */
  attempt: number;
  /** When it started (ms since the epoch); read for running instances other than the original, and only for a CRR with minStartedSeconds. */
  startedAtMs?: number;
}

export interface StepInput {
  crr: ContainerRecreateRequest;
  /** The runtime's name as it prefixes container IDs ("containerd"). */
  runtimeName: string;
  nowMs: number;
  /** Newest instance per container name; undefined until the runtime was asked. */
  containers?: ReadonlyMap<string, ObservedContainer>;
}

/** One container to stop: preStop, then StopContainer with the grace period. */
export interface KillTarget {
  name: string;
  containerId: string;
  graceSeconds: number;
  container: ContainerRecreateRequestContainer;
}

export type Plan =
  /** Nothing to do now; look again after requeueAfterMs (or when the CRR changes). */
  | { type: 'wait'; requeueAfterMs?: number | undefined; reason: string }
  /** The runtime's view of the pod is needed: call again with `containers`. */
  | { type: 'observe' }
  /** Persist this status, then plan again. */
  | { type: 'write'; status: ContainerRecreateRequestStatus; reason: string }
  /** Persist this status (it records the stop; with forceRecreate first, otherwise beside the kills), kill the targets, then plan again. */
  | { type: 'kill'; status: ContainerRecreateRequestStatus; kills: KillTarget[] }
  /** Persist this completed status: the CRR is finished. */
  | { type: 'complete'; status: ContainerRecreateRequestStatus };

/** While the runtime's own view is what a plan waits for, it is looked at this often. */
export const RECREATING_RECHECK_MS = 5_000;
/**
 * While a stopped container waits for the kubelet to bring it back and report it, the CRR changes
 * when that happens (the manager writes the pod's report into its snapshot, and that update wakes
 * the daemon): looking at the runtime in between cannot complete anything, so this timer only
 * covers an update that never came. With the 5 s timer here, 50 CRRs at once cost 6.8
 * ListContainers each, most of them while the kubelets were still reporting.
 */
export const KUBELET_REPORT_RECHECK_MS = 30_000;
/** A timer fires this much after the moment it waits for, so the moment has surely passed. */
const TIMER_SLACK_MS = 100;

export function planCrr(input: StepInput): Plan {
  const { crr, nowMs } = input;
  if (crr.metadata?.deletionTimestamp !== undefined) return { type: 'wait', reason: 'being deleted' };
  if (isCrrCompleted(crr)) return { type: 'wait', reason: 'completed' };
  const now = new Date(nowMs);
  const complete = (message: string, unfinished?: string): Plan => ({ type: 'complete', status: completedCrrStatus(crr, now, message, unfinished) });

  // The manager completes expired CRRs too; the daemon checking as well means no kill starts late.
  // A stop that began before the deadline is seen through: the status says what became of it.
  const deadline = crr.spec.activeDeadlineSeconds;
  if (deadline !== undefined && nowMs >= crrCreatedMs(crr) + deadline * 1000) {
    if (crrStopsInFlight(crr).length === 0) return complete(MESSAGE_CRR_DEADLINE_EXCEEDED);
    if (input.containers === undefined) return { type: 'observe' };
    return planAfterDeadline(crr, input.containers, nowMs);
  }

  const runtime = resolveRuntime(crr, input.runtimeName);
  if (runtime !== undefined) return complete(crrRuntimeNotFoundMessage(runtime));

  const recreating = crr.status?.phase === CRR_PHASE_RECREATING;
  const unreadyGrace = crr.spec.strategy?.unreadyGracePeriodSeconds;
  if (unreadyGrace !== undefined) {
    // The manager makes the pod unready only once it sees Recreating, and then says when.
    if (!recreating) return { type: 'write', status: { ...crr.status, phase: CRR_PHASE_RECREATING }, reason: 'unready grace: asking the manager' };
    const acquired = unreadyAcquiredAt(crr);
    if (acquired === undefined) return { type: 'wait', reason: 'unready grace: waiting for the manager' };
    // A date-time by the v1beta1 schema; the v1alpha1 codec drops an unreadable annotation, which
    // the manager then writes again.
    const left = Date.parse(acquired) + unreadyGrace * 1000 - nowMs;
    if (left > 0) return { type: 'wait', requeueAfterMs: left + TIMER_SLACK_MS, reason: 'unready grace' };
  }

  if (input.containers === undefined) return { type: 'observe' };
  return planContainers(crr, input.containers, nowMs);
}

/** Why the containers cannot be addressed through this runtime, or undefined when they can. */
function resolveRuntime(crr: ContainerRecreateRequest, runtimeName: string): string | undefined {
  for (const c of crr.spec.containers) {
    const id = c.statusContext?.containerID;
    if (id === undefined || id === '') return `container ${c.name} has no statusContext.containerID`;
    const scheme = splitContainerID(id)?.scheme;
    if (scheme === undefined) return `container ${c.name}: malformed containerID ${id}`;
    if (scheme !== runtimeName) return `container ${c.name} runs in runtime ${scheme}, this node's runtime is ${runtimeName}`;
  }
  return undefined;
}

export function splitContainerID(id: string): { scheme: string; id: string } | undefined {
  const m = /^([^:/]+):\/\/(.+)$/.exec(id);
  return m?.[1] !== undefined && m[2] !== undefined ? { scheme: m[1], id: m[2] } : undefined;
}

/** The runtime shows an instance other than the one the CRR was made for: the kubelet recreated it. */
function isNewInstance(c: ContainerRecreateRequestContainer, obs: ObservedContainer): boolean {
  return obs.id !== splitContainerID(c.statusContext?.containerID ?? '')?.id || obs.attempt > (c.statusContext?.restartCount ?? 0);
}

interface Assessment {
  state: ContainerState;
  /** The instance may be stopped now. */
  killable: boolean;
  /** Recreated, but must run longer before it counts: look again after this. */
  waitMs?: number;
}

function assess(
  c: ContainerRecreateRequestContainer,
  prev: ContainerState | undefined,
  obs: ObservedContainer | undefined,
  crr: ContainerRecreateRequest,
  synced: ContainerRecreateRequestSyncContainerStatus[] | undefined,
  nowMs: number,
): Assessment {
  if (prev !== undefined && isCrrContainerFinished(prev)) return { state: prev, killable: false };
  // What this CRR already did to the container (the stop it recorded) travels with its state until
  // it is finished. The record is not rewritten once the stop is done: the runtime shows that, and
  // the API budget goes to the next stop instead.
  const stop = prev?.isKilled === true ? crrStopRecord(prev.message) : undefined;
  const killed = prev?.isKilled === true ? { isKilled: true, ...(stop !== undefined ? { message: prev?.message } : {}) } : {};
  if (obs === undefined) {
    return { state: { name: c.name, phase: CRR_PHASE_PENDING, message: MESSAGE_CRR_CONTAINER_NOT_FOUND_ON_NODE, ...(prev?.isKilled === true ? { isKilled: true } : {}) }, killable: false };
  }
  const recreatingState: ContainerState = { name: c.name, phase: CRR_PHASE_RECREATING, ...killed };
  // Exited or not started yet: the kubelet is bringing it back.
  if (!obs.running) return { state: recreatingState, killable: false };
  const pending: Assessment = { state: { name: c.name, phase: CRR_PHASE_PENDING, ...killed }, killable: true };
  // The instance this CRR was stopping still runs: the daemon restarted during the stop (the runtime
  // gives a stop up when its caller goes away). Finish it; it is the same instance, not a new one.
  if (stop?.containerID === obs.id) return pending;
  if (crr.spec.strategy?.forceRecreate === true && prev?.isKilled !== true) return pending;
  if (!isNewInstance(c, obs)) return pending;

  const scheme = splitContainerID(c.statusContext?.containerID ?? '')?.scheme ?? '';
  const entry = synced?.find((s) => s.name === c.name);
  if (entry === undefined || entry.containerID !== `${scheme}://${obs.id}` || !entry.ready) return { state: recreatingState, killable: false };
  const minStartedMs = (crr.spec.strategy?.minStartedSeconds ?? 0) * 1000;
  if (minStartedMs > 0) {
    if (obs.startedAtMs === undefined) return { state: recreatingState, killable: false, waitMs: 1_000 };
    const left = obs.startedAtMs + minStartedMs - nowMs;
    if (left > 0) return { state: recreatingState, killable: false, waitMs: left + TIMER_SLACK_MS };
  }
  return { state: { name: c.name, phase: CRR_PHASE_SUCCEEDED, ...(prev?.isKilled === true ? { isKilled: true } : {}) }, killable: false };
}

function planContainers(crr: ContainerRecreateRequest, observed: ReadonlyMap<string, ObservedContainer>, nowMs: number): Plan {
  const previous = new Map((crr.status?.containerRecreateStates ?? []).map((s) => [s.name, s]));
  const synced = syncedContainerStatuses(crr);
  const assessed = crr.spec.containers.map((c) => ({ c, ...assess(c, previous.get(c.name), observed.get(c.name), crr, synced, nowMs) }));
  const states = assessed.map((a) => a.state);
  const ordered = crr.spec.strategy?.orderedRecreate === true;
  const ignore = crr.spec.strategy?.failurePolicy === CRR_FAILURE_POLICY_IGNORE;
  const now = new Date(nowMs);

  const kills: KillTarget[] = [];
  let waitMs: number | undefined;
  const waitAtMost = (ms: number): void => {
    waitMs = waitMs === undefined ? ms : Math.min(waitMs, ms);
  };
  for (const a of assessed) {
    const phase = a.state.phase;
    if (phase === CRR_PHASE_SUCCEEDED) continue;
    if (phase === CRR_PHASE_FAILED) {
      if (ignore) continue;
      return finish(crr, states, now, crrAbandonedMessage(a.c.name));
    }
    if (phase === CRR_PHASE_RECREATING) {
      waitAtMost(a.waitMs ?? KUBELET_REPORT_RECHECK_MS);
      if (ordered) break;
      continue;
    }
    if (a.killable) {
      const obs = observed.get(a.c.name);
      if (obs !== undefined) kills.push({ name: a.c.name, containerId: obs.id, graceSeconds: crrStopGraceSeconds(crr), container: a.c });
      // Ordered: one at a time, each back before the next. Fail: one stop at a time, so the first
      // failure leaves the rest untouched.
      if (ordered || !ignore) break;
      continue;
    }
    waitAtMost(RECREATING_RECHECK_MS);
    if (ordered) break;
  }

  const status: ContainerRecreateRequestStatus = { ...crr.status, phase: CRR_PHASE_RECREATING, containerRecreateStates: states };
  if (kills.length > 0) {
    const targets = new Set(kills.map((k) => k.name));
    status.containerRecreateStates = states.map((s) => {
      if (!targets.has(s.name)) return s;
      const k = kills.find((t) => t.name === s.name);
      return { name: s.name, phase: CRR_PHASE_RECREATING, isKilled: true, message: crrStoppingMessage(k?.containerId ?? '', k?.graceSeconds ?? 0) };
    });
    return { type: 'kill', status, kills };
  }
  if (states.every((s) => isCrrContainerFinished(s))) return finish(crr, states, now, undefined);
  if (!sameStatus(crr.status, status)) return { type: 'write', status, reason: 'container states changed' };
  // Past the deadline a stop's outcome is reported without waiting for readiness: look then.
  const deadline = crr.spec.activeDeadlineSeconds;
  if (deadline !== undefined && waitMs !== undefined) waitAtMost(Math.max(0, crrCreatedMs(crr) + deadline * 1000 - nowMs) + TIMER_SLACK_MS);
  return { type: 'wait', reason: 'containers recreating', requeueAfterMs: waitMs };
}

/** Completes with these states; the top-level message names every container not recreated. */
function finish(crr: ContainerRecreateRequest, states: ContainerState[], now: Date, unfinishedMessage: string | undefined): Plan {
  const status = completedCrrStatus({ ...crr, status: { ...crr.status, phase: CRR_PHASE_RECREATING, containerRecreateStates: states } }, now, undefined, unfinishedMessage);
  const failed = (status.containerRecreateStates ?? []).filter((s) => s.phase === CRR_PHASE_FAILED).map((s) => s.name);
  if (failed.length > 0) status.message = crrFailedContainersMessage(failed);
  return { type: 'complete', status };
}


/**
 * Past the deadline no stop starts, and one that began before it is reported as what it became: a
 * new instance runs, so the container was recreated (Succeeded, without waiting for readiness or
 * minStartedSeconds: the CRR's time is up); the old one exited and the kubelet has not brought it
 * back yet, so look again; the old one still runs (the daemon restarted during the stop, which the
 * runtime then gave up), so it was not recreated and is not stopped now. Containers whose stop
 * never began fail with the deadline.
 */
function planAfterDeadline(crr: ContainerRecreateRequest, observed: ReadonlyMap<string, ObservedContainer>, nowMs: number): Plan {
  const inFlight = new Set(crrStopsInFlight(crr));
  const states = (crr.status?.containerRecreateStates ?? []).map((s): ContainerState => {
    if (!inFlight.has(s.name)) return s;
    const obs = observed.get(s.name);
    const c = crr.spec.containers.find((x) => x.name === s.name);
    if (obs === undefined || c === undefined) return { name: s.name, phase: CRR_PHASE_FAILED, isKilled: true, message: MESSAGE_CRR_CONTAINER_NOT_FOUND_ON_NODE };
    if (obs.running && isNewInstance(c, obs)) return { name: s.name, phase: CRR_PHASE_SUCCEEDED, isKilled: true };
    if (!obs.running) return { name: s.name, phase: CRR_PHASE_RECREATING, isKilled: true, ...(s.message !== undefined ? { message: s.message } : {}) };
    return { name: s.name, phase: CRR_PHASE_FAILED, isKilled: true, message: MESSAGE_CRR_DEADLINE_EXCEEDED };
  });
  if (states.some((s) => inFlight.has(s.name) && !isCrrContainerFinished(s))) {
    const status: ContainerRecreateRequestStatus = { ...crr.status, phase: CRR_PHASE_RECREATING, containerRecreateStates: states };
    if (!sameStatus(crr.status, status)) return { type: 'write', status, reason: 'stops begun before the deadline' };
    return { type: 'wait', reason: 'stops begun before the deadline', requeueAfterMs: RECREATING_RECHECK_MS };
  }
  const status = completedCrrStatus({ ...crr, status: { ...crr.status, phase: CRR_PHASE_RECREATING, containerRecreateStates: states } }, new Date(nowMs), MESSAGE_CRR_DEADLINE_EXCEEDED);
  return { type: 'complete', status };
}

/**
 * The status after the kills of a plan ran: failed ones failed; stopped ones keep the recorded stop,
 * which the runtime now shows as done (so a successful stop costs no status write).
 */
export function applyKillResults(status: ContainerRecreateRequestStatus, results: ReadonlyMap<string, string | undefined>): ContainerRecreateRequestStatus {
  return {
    ...status,
    containerRecreateStates: (status.containerRecreateStates ?? []).map((s) => {
      if (!results.has(s.name)) return s;
      const error = results.get(s.name);
      if (error === undefined) return s;
      return { name: s.name, phase: CRR_PHASE_FAILED, message: crrKillErrorMessage(error) };
    }),
  };
}

export function sameStatus(a: ContainerRecreateRequestStatus | undefined, b: ContainerRecreateRequestStatus | undefined): boolean {
  return JSON.stringify(normalise(a)) === JSON.stringify(normalise(b));
}

function normalise(s: ContainerRecreateRequestStatus | undefined): unknown {
  if (s === undefined) return undefined;
  return {
    phase: s.phase,
    completionTime: s.completionTime,
    message: s.message,
    containerRecreateStates: (s.containerRecreateStates ?? []).map((c) => ({ name: c.name, phase: c.phase, message: c.message, isKilled: c.isKilled === true })),
  };
}
