// The manager's CRR decisions as one pure function of the CRR, its pod and the time: the single next
// write to make, or how long until something is due. The controller makes that write and asks again,
// so a manager restarted between any two writes carries on from what is stored.
import type { Pod } from '../../api/types/core.js';
import { completedCrrStatus, crrCreatedMs, crrDeadlineStopReportMs, crrStopsInFlight, isCrrCompleted } from '../../api/crr-status.js';
import { CRR_PHASE_RECREATING } from '../../api/enums.js';
import { CRR_DAEMON_RESPONSE_TIMEOUT_SECONDS } from '../../api/limits.js';
import { MESSAGE_CRR_DAEMON_NOT_RESPONDED, MESSAGE_CRR_DEADLINE_EXCEEDED, MESSAGE_CRR_POD_GONE } from '../../api/messages.js';
import { unreadyAcquiredAt } from '../../api/crr-conversion.js';
import { FINALIZER_CRR_UNREADY_ACQUIRED, LABEL_CRR_ACTIVE, LABEL_CRR_POD_UID } from '../../api/metadata-keys.js';
import { formatTime } from '../../api/time.js';
import type { ContainerRecreateRequest, ContainerRecreateRequestStatus, ContainerRecreateRequestSyncContainerStatus } from '../../api/types/containerrecreaterequest.js';
import { crrHolder, hasKruiseReadinessGate, holds } from './readiness.js';

export type ManagerPlan =
  | { type: 'done'; requeueAfterMs?: number }
  | { type: 'complete'; status: ContainerRecreateRequestStatus }
  /** Take the CRR out of the pod's KruisePodReady holders (the pod may become ready). */
  | { type: 'releasePod' }
  | { type: 'removeFinalizer' }
  | { type: 'removeActiveLabel' }
  | { type: 'delete' }
  /** Write the snapshot of the pod's recreated containers for the daemon. */
  | { type: 'syncStatuses'; value: ContainerRecreateRequestSyncContainerStatus[] }
  | { type: 'addFinalizer' }
  /** Add the CRR to the pod's KruisePodReady holders (the pod becomes not ready). */
  | { type: 'holdPod' }
  | { type: 'markUnreadyAcquired'; value: string };

const TIMER_SLACK_MS = 100;

export function planCrrManager(crr: ContainerRecreateRequest, pod: Pod | undefined, nowMs: number): ManagerPlan {
  const deleting = crr.metadata?.deletionTimestamp !== undefined;
  const finalizer = (crr.metadata?.finalizers ?? []).includes(FINALIZER_CRR_UNREADY_ACQUIRED);
  const holder = crrHolder(crr.metadata?.namespace ?? '', crr.metadata?.name ?? '');
  const samePod = pod !== undefined && pod.metadata?.uid === crr.metadata?.labels?.[LABEL_CRR_POD_UID];
  const podAlive = samePod && pod.metadata?.deletionTimestamp === undefined;

  if (deleting || isCrrCompleted(crr)) {
    // Readiness comes back before the finalizer goes, whether the CRR finished or was deleted.
    if (finalizer) return podAlive && hasKruiseReadinessGate(pod) && holds(pod, holder) ? { type: 'releasePod' } : { type: 'removeFinalizer' };
    if (deleting) return { type: 'done' };
    if (crr.metadata?.labels?.[LABEL_CRR_ACTIVE] !== undefined) return { type: 'removeActiveLabel' };
    const ttl = crr.spec.ttlSecondsAfterFinished;
    const completedAt = Date.parse(crr.status?.completionTime ?? '');
    if (ttl === undefined || Number.isNaN(completedAt)) return { type: 'done' };
    const left = completedAt + ttl * 1000 - nowMs;
    return left <= 0 ? { type: 'delete' } : { type: 'done', requeueAfterMs: left + TIMER_SLACK_MS };
  }

  const now = new Date(nowMs);
  if (!podAlive) return { type: 'complete', status: completedCrrStatus(crr, now, MESSAGE_CRR_POD_GONE) };

  const created = crrCreatedMs(crr);
  const timers: number[] = [];
  // Pending means a daemon answered and queued it behind another CRR of the pod.
  if (crr.status?.phase === undefined) {
    const at = created + CRR_DAEMON_RESPONSE_TIMEOUT_SECONDS * 1000;
    if (nowMs >= at) return { type: 'complete', status: completedCrrStatus(crr, now, MESSAGE_CRR_DAEMON_NOT_RESPONDED) };
    timers.push(at);
  }
  const deadline = crr.spec.activeDeadlineSeconds;
  if (deadline !== undefined) {
    const at = created + deadline * 1000;
    // A stop the daemon began before the deadline recreates the container whatever happens now: the
    // daemon reports what became of it, and only a daemon silent long after the stop should have
    // ended leaves it to this completion.
    const reportBy = crrStopsInFlight(crr).length > 0 ? at + crrDeadlineStopReportMs(crr) : at;
    if (nowMs >= reportBy) return { type: 'complete', status: completedCrrStatus(crr, now, MESSAGE_CRR_DEADLINE_EXCEEDED) };
    timers.push(reportBy);
  }
  const wait = (): ManagerPlan => (timers.length > 0 ? { type: 'done', requeueAfterMs: Math.max(0, Math.min(...timers) - nowMs) + TIMER_SLACK_MS } : { type: 'done' });
  if (crr.status?.phase !== CRR_PHASE_RECREATING) return wait();

  const snapshot = recreatedContainerStatuses(crr, pod);
  // No snapshot yet reads as an empty one (upstream writes "[]" first, a write that tells the daemon
  // nothing and wakes it for nothing).
  if (JSON.stringify(crr.status.containerStatusSnapshot ?? []) !== JSON.stringify(snapshot)) return { type: 'syncStatuses', value: snapshot };

  if (crr.spec.strategy?.unreadyGracePeriodSeconds !== undefined && unreadyAcquiredAt(crr) === undefined) {
    // Without the readiness gate the pod cannot be made unready: the grace is a plain delay.
    if (hasKruiseReadinessGate(pod)) {
      if (!finalizer) return { type: 'addFinalizer' };
      if (!holds(pod, holder)) return { type: 'holdPod' };
    }
    return { type: 'markUnreadyAcquired', value: formatTime(now) };
  }
  return wait();
}

/**
 * The pod's statuses of the CRR's containers that run an instance started at or after the CRR was
 * created: the recreated ones, whose readiness tells the daemon when a container is back.
 */
export function recreatedContainerStatuses(crr: ContainerRecreateRequest, pod: Pod): ContainerRecreateRequestSyncContainerStatus[] {
  const created = Math.floor(crrCreatedMs(crr) / 1000) * 1000;
  const out: ContainerRecreateRequestSyncContainerStatus[] = [];
  for (const c of crr.spec.containers) {
    const s = (pod.status?.containerStatuses ?? []).find((cs) => cs.name === c.name);
    const startedAt = s?.state?.running?.startedAt;
    if (s === undefined || startedAt === undefined || startedAt === null) continue;
    const started = Date.parse(startedAt);
    if (Number.isNaN(started) || started < created) continue;
    const entry: ContainerRecreateRequestSyncContainerStatus = { name: c.name, ready: s.ready, restartCount: s.restartCount };
    if (s.containerID !== undefined && s.containerID !== '') entry.containerID = s.containerID;
    out.push(entry);
  }
  return out;
}
