import type { LabelSelector, PodTemplateSpec } from '../../api/types/core.js';
import { STATEFUL_SET_UPDATE_ON_DELETE, UPDATE_TYPE_RECREATE } from '../../api/enums.js';
import { CLONE_SET_DEFAULT_MAX_UNAVAILABLE } from '../../api/limits.js';
import { API_VERSION_V1ALPHA1, API_VERSION_V1BETA1, KIND_CLONE_SET, KIND_STATEFUL_SET } from '../../api/group-version.js';
import type { IntOrString } from '../../api/types/common.js';
import type { AdvancedStatefulSet, CloneSet } from '../../api/types/workloads.js';

/** What pre-download needs of a CloneSet or an Advanced StatefulSet, rules resolved. */
export interface Workload {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
  annotations: Record<string, string>;
  replicas: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
  /** Why pods are not updated in place by a rollout (nothing to pre-download); undefined when they are. */
  notInPlace: string | undefined;
  /** Pods that stay on the old revision. */
  partition: number;
  /** Pods that may be updating at once. */
  maxUnavailable: number;
  currentRevision?: string | undefined;
  updateRevision?: string | undefined;
  updatedReadyReplicas: number;
}

/**
 * An int-or-percent against a total, as Kubernetes' GetScaledValueFromIntOrPercent. Returns
 * undefined for text that is neither.
 */
export function scaled(v: IntOrString | undefined, total: number, roundUp: boolean): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number') return Number.isInteger(v) ? v : undefined;
  const pct = /^(\d+)%$/.exec(v.trim());
  if (pct) {
    const exact = (Number(pct[1]) * total) / 100;
    return roundUp ? Math.ceil(exact) : Math.floor(exact);
  }
  return /^\d+$/.test(v.trim()) ? Number(v.trim()) : undefined;
}

const RECREATED = `pods are recreated (${UPDATE_TYPE_RECREATE}), not updated in place`;

/**
 * As upstream's pkg/controller/statefulset/statefulset_predownload_image.go: OnDelete leaves
 * updating to whoever deletes the pods, and without rollingUpdate (or with podUpdatePolicy
 * ReCreate, the default) pods are recreated.
 */
function statefulSetNotInPlace(sts: AdvancedStatefulSet): string | undefined {
  const us = sts.spec.updateStrategy;
  if (us?.type === STATEFUL_SET_UPDATE_ON_DELETE) return `updateStrategy is ${STATEFUL_SET_UPDATE_ON_DELETE}: pods update only when someone deletes them`;
  if (us?.rollingUpdate === undefined) return RECREATED;
  return (us.rollingUpdate.podUpdatePolicy ?? UPDATE_TYPE_RECREATE) === UPDATE_TYPE_RECREATE ? RECREATED : undefined;
}

export function fromCloneSet(cs: CloneSet): Workload {
  const replicas = cs.spec.replicas ?? 1;
  const us = cs.spec.updateStrategy ?? {};
  return {
    apiVersion: API_VERSION_V1ALPHA1,
    kind: KIND_CLONE_SET,
    name: cs.metadata?.name ?? '',
    namespace: cs.metadata?.namespace ?? '',
    uid: cs.metadata?.uid ?? '',
    annotations: cs.metadata?.annotations ?? {},
    replicas,
    selector: cs.spec.selector,
    template: cs.spec.template,
    notInPlace: us.type === UPDATE_TYPE_RECREATE ? RECREATED : undefined,
    partition: scaled(us.partition, replicas, true) ?? 0,
    // Rounded down, as CloneSet does.
    maxUnavailable: scaled(us.maxUnavailable ?? CLONE_SET_DEFAULT_MAX_UNAVAILABLE, replicas, false) ?? 0,
    currentRevision: cs.status?.currentRevision || undefined,
    updateRevision: cs.status?.updateRevision || undefined,
    updatedReadyReplicas: cs.status?.updatedReadyReplicas ?? 0,
  };
}

export function fromStatefulSet(sts: AdvancedStatefulSet): Workload {
  const replicas = sts.spec.replicas ?? 1;
  const ru = sts.spec.updateStrategy?.rollingUpdate ?? {};
  return {
    apiVersion: API_VERSION_V1BETA1,
    kind: KIND_STATEFUL_SET,
    name: sts.metadata?.name ?? '',
    namespace: sts.metadata?.namespace ?? '',
    uid: sts.metadata?.uid ?? '',
    annotations: sts.metadata?.annotations ?? {},
    replicas,
    selector: sts.spec.selector,
    template: sts.spec.template,
    notInPlace: statefulSetNotInPlace(sts),
    // Pods with an ordinal below the partition keep the old revision.
    partition: Math.min(replicas, Math.max(0, ru.partition ?? 0)),
    maxUnavailable: scaled(ru.maxUnavailable ?? 1, replicas, false) ?? 1,
    currentRevision: sts.status?.currentRevision || undefined,
    updateRevision: sts.status?.updateRevision || undefined,
    updatedReadyReplicas: sts.status?.updatedReadyReplicas ?? 0,
  };
}
