// ContainerRecreateRequest status rules shared by the daemon and the manager: when a CRR counts as
// finished, what its completed status says, and how the manager's container-status snapshot reads.
import { CRR_PHASE_COMPLETED, CRR_PHASE_FAILED, CRR_PHASE_SUCCEEDED } from './enums.js';
import { CRI_STOP_RUNTIME_TIMEOUT_SECONDS, CRR_DAEMON_RESPONSE_TIMEOUT_SECONDS, DEFAULT_CRR_TERMINATION_GRACE_SECONDS, MIN_CRR_STOP_GRACE_SECONDS } from './limits.js';
import { formatTime, timeMs } from './time.js';
import type {
  ContainerRecreateRequest,
  ContainerRecreateRequestContainerRecreateState,
  ContainerRecreateRequestStatus,
  ContainerRecreateRequestSyncContainerStatus,
} from './types/containerrecreaterequest.js';

export function isCrrCompleted(crr: ContainerRecreateRequest): boolean {
  return crr.status?.phase === CRR_PHASE_COMPLETED || crr.status?.completionTime !== undefined;
}

export function isCrrContainerFinished(state: ContainerRecreateRequestContainerRecreateState | undefined): boolean {
  return state?.phase === CRR_PHASE_SUCCEEDED || state?.phase === CRR_PHASE_FAILED;
}

/** Milliseconds since the epoch of metadata.creationTimestamp (0 when absent). */
export function crrCreatedMs(crr: ContainerRecreateRequest): number {
  return timeMs(crr.metadata?.creationTimestamp) ?? 0;
}

/** The grace period of the CRR's stops (the webhook defaults it from the pod). */
export function crrStopGraceSeconds(crr: ContainerRecreateRequest): number {
  return crr.spec.strategy?.terminationGracePeriodSeconds ?? DEFAULT_CRR_TERMINATION_GRACE_SECONDS;
}

/**
 * The containers whose stop this CRR began and whose outcome is not recorded yet. A stop cannot be
 * taken back: once it began, the container is recreated whatever the deadline says, so the CRR's
 * status waits for what happened to it (upstream completes at once and reports such a container
 * Failed while the kubelet recreates it).
 */
export function crrStopsInFlight(crr: ContainerRecreateRequest): string[] {
  return (crr.status?.containerRecreateStates ?? []).filter((s) => s.isKilled === true && !isCrrContainerFinished(s)).map((s) => s.name);
}

/** When the deadline passed with stops in flight, how long after it the daemon's report is awaited. */
export function crrDeadlineStopReportMs(crr: ContainerRecreateRequest): number {
  // The whole stop (preStop within the grace, then at least the smallest stop grace, and the time
  // the runtime may take to answer), and the daemon's response time for the kubelet's restart and
  // the status write.
  return (crrStopGraceSeconds(crr) + MIN_CRR_STOP_GRACE_SECONDS + CRI_STOP_RUNTIME_TIMEOUT_SECONDS + CRR_DAEMON_RESPONSE_TIMEOUT_SECONDS) * 1000;
}

/**
 * The status of a CRR that finishes now. Every container without a result gets `Failed` with
 * `unfinishedMessage` (upstream leaves them as they were, so a completed CRR could not tell which
 * containers were never recreated); `message` is the top-level reason, omitted when undefined.
 */
export function completedCrrStatus(
  crr: ContainerRecreateRequest,
  now: Date,
  message: string | undefined,
  unfinishedMessage: string | undefined = message,
): ContainerRecreateRequestStatus {
  const previous = new Map((crr.status?.containerRecreateStates ?? []).map((s) => [s.name, s]));
  const states = crr.spec.containers.map((c): ContainerRecreateRequestContainerRecreateState => {
    const s = previous.get(c.name);
    if (s !== undefined && isCrrContainerFinished(s)) return s;
    const failed: ContainerRecreateRequestContainerRecreateState = { name: c.name, phase: CRR_PHASE_FAILED };
    if (unfinishedMessage !== undefined && unfinishedMessage !== '') failed.message = unfinishedMessage;
    if (s?.isKilled === true) failed.isKilled = true;
    return failed;
  });
  // The manager's snapshot and conditions stay: they tell what happened before completion.
  const { containerStatusSnapshot, conditions } = crr.status ?? {};
  const status: ContainerRecreateRequestStatus = { phase: CRR_PHASE_COMPLETED, completionTime: formatTime(now), containerRecreateStates: states };
  if (message !== undefined && message !== '') status.message = message;
  if (containerStatusSnapshot !== undefined) status.containerStatusSnapshot = containerStatusSnapshot;
  if (conditions !== undefined) status.conditions = conditions;
  return status;
}

/** The manager's snapshot of the pod's running containers, or undefined before its first. */
export function syncedContainerStatuses(crr: ContainerRecreateRequest): ContainerRecreateRequestSyncContainerStatus[] | undefined {
  return crr.status?.containerStatusSnapshot;
}
