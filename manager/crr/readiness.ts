// The pod side of unreadyGracePeriodSeconds: a CRR holds a pod not-ready by putting itself into the
// message of the pod's KruisePodReady condition (a readiness gate), and lets go by taking itself out.
// Pure functions over the pod status; the controller writes what they return.
import type { Pod, PodCondition, PodStatus } from '../../api/types/core.js';
import { CONDITION_KRUISE_POD_READY, POD_READY_USER_AGENT_CRR } from '../../api/metadata-keys.js';
import { formatTime } from '../../api/time.js';
import type { PodReadinessHolder } from '../../api/types/containerrecreaterequest.js';

const CONDITION_READY = 'Ready';
const CONDITION_CONTAINERS_READY = 'ContainersReady';
/** The kubelet's reason for a pod whose readiness gates are not all True. */
const REASON_READINESS_GATES_NOT_READY = 'ReadinessGatesNotReady';

export function crrHolder(namespace: string, name: string): PodReadinessHolder {
  return { userAgent: POD_READY_USER_AGENT_CRR, key: `${namespace}/${name}` };
}

export function hasKruiseReadinessGate(pod: Pod): boolean {
  return (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === CONDITION_KRUISE_POD_READY);
}

export function holdersOf(pod: Pod): PodReadinessHolder[] {
  const message = condition(pod.status, CONDITION_KRUISE_POD_READY)?.message;
  if (message === undefined || message === '') return [];
  try {
    const parsed: unknown = JSON.parse(message);
    return Array.isArray(parsed) ? parsed.filter((h): h is PodReadinessHolder => typeof h?.userAgent === 'string' && typeof h?.key === 'string') : [];
  } catch {
    return [];
  }
}

export function holds(pod: Pod, holder: PodReadinessHolder): boolean {
  return holdersOf(pod).some((h) => h.userAgent === holder.userAgent && h.key === holder.key);
}

/** The pod status with the holder added and the pod not ready; undefined when it already holds. */
export function addHolder(pod: Pod, holder: PodReadinessHolder, now: Date): PodStatus | undefined {
  if (holds(pod, holder)) return undefined;
  return withHolders(pod, [...holdersOf(pod), holder], now);
}

/** The pod status without the holder (ready again once nothing holds it); undefined when absent. */
export function removeHolder(pod: Pod, holder: PodReadinessHolder, now: Date): PodStatus | undefined {
  if (!holds(pod, holder)) return undefined;
  return withHolders(pod, holdersOf(pod).filter((h) => !(h.userAgent === holder.userAgent && h.key === holder.key)), now);
}

function withHolders(pod: Pod, holders: PodReadinessHolder[], now: Date): PodStatus {
  const sorted = [...holders].sort((a, b) => a.userAgent.localeCompare(b.userAgent) || a.key.localeCompare(b.key));
  const gate: PodCondition = { type: CONDITION_KRUISE_POD_READY, status: sorted.length === 0 ? 'True' : 'False' };
  if (sorted.length > 0) gate.message = JSON.stringify(sorted);
  let conditions = setCondition(pod.status?.conditions ?? [], gate, now);
  conditions = setCondition(conditions, readyCondition(pod, conditions), now);
  return { ...pod.status, conditions };
}

/**
 * Ready as the kubelet computes it: containers ready and every readiness gate True. The kubelet
 * only recomputes it on its own next status sync, so the controller writes it along with the gate.
 */
function readyCondition(pod: Pod, conditions: PodCondition[]): PodCondition {
  const containersReady = conditions.find((c) => c.type === CONDITION_CONTAINERS_READY)?.status === 'True';
  const unmet = (pod.spec?.readinessGates ?? []).map((g) => g.conditionType).filter((t) => conditions.find((c) => c.type === t)?.status !== 'True');
  const current = conditions.find((c) => c.type === CONDITION_READY);
  if (!containersReady) return current ?? { type: CONDITION_READY, status: 'False' };
  if (unmet.length === 0) return { type: CONDITION_READY, status: 'True' };
  const quoted = unmet.map((t) => JSON.stringify(t)).join(', ');
  return { type: CONDITION_READY, status: 'False', reason: REASON_READINESS_GATES_NOT_READY, message: `the status of pod readiness gate ${quoted} is not "True", but False` };
}

function condition(status: PodStatus | undefined, type: string): PodCondition | undefined {
  return (status?.conditions ?? []).find((c) => c.type === type);
}

/** Replaces (or appends) a condition; the transition time moves only when the status changes. */
function setCondition(conditions: PodCondition[], next: PodCondition, now: Date): PodCondition[] {
  const i = conditions.findIndex((c) => c.type === next.type);
  const old = i >= 0 ? conditions[i] : undefined;
  const merged: PodCondition = { ...next };
  const at = old !== undefined && old.status === next.status ? old.lastTransitionTime : formatTime(now);
  if (at !== undefined) merged.lastTransitionTime = at;
  if (old !== undefined && 'lastProbeTime' in old) merged.lastProbeTime = old.lastProbeTime;
  return i >= 0 ? conditions.map((c, j) => (j === i ? merged : c)) : [...conditions, merged];
}
