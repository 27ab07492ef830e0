// ContainerRecreateRequest between v1alpha1 and v1beta1, as upstream's main branch converts it
// (apis/apps/v1alpha1/containerrecreaterequest_conversion.go, #2458): v1alpha1 keeps the manager's
// snapshot of the pod's container statuses and the moment the pod was made not-ready in
// annotations, v1beta1 in status.containerStatusSnapshot and a PodUnreadyAcquired condition.
// Everything else is the same JSON. Pure: the conversion webhook and the v1alpha1 client codec
// (kube/kruise.ts) both use it.
import { API_VERSION_V1ALPHA1, API_VERSION_V1BETA1 } from './group-version.js';
import {
  ANNOTATION_CRR_SYNC_CONTAINER_STATUSES,
  ANNOTATION_CRR_UNREADY_ACQUIRED,
  CONDITION_CRR_POD_UNREADY_ACQUIRED,
  MESSAGE_CRR_UNREADY_ACQUIRED,
  REASON_CRR_UNREADY_ACQUIRED,
} from './metadata-keys.js';
import { isRfc3339 } from './time.js';
import type { Condition } from './types/common.js';
import type { ContainerRecreateRequest, ContainerRecreateRequestSyncContainerStatus } from './types/containerrecreaterequest.js';

function isSyncStatus(e: unknown): e is ContainerRecreateRequestSyncContainerStatus {
  return typeof e === 'object' && e !== null && typeof (e as { name?: unknown }).name === 'string' && typeof (e as { ready?: unknown }).ready === 'boolean';
}

function parseSnapshot(raw: string | undefined): ContainerRecreateRequestSyncContainerStatus[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter(isSyncStatus) : undefined;
  } catch {
    return undefined;
  }
}

/** When the pod was made not-ready for the CRR (v1beta1 model), if it was. */
export function unreadyAcquiredAt(crr: ContainerRecreateRequest): string | undefined {
  return crr.status?.conditions?.find((c) => c.type === CONDITION_CRR_POD_UNREADY_ACQUIRED && c.status === 'True')?.lastTransitionTime;
}

export function unreadyAcquiredCondition(at: string): Condition {
  return { type: CONDITION_CRR_POD_UNREADY_ACQUIRED, status: 'True', lastTransitionTime: at, reason: REASON_CRR_UNREADY_ACQUIRED, message: MESSAGE_CRR_UNREADY_ACQUIRED };
}

/**
 * A v1alpha1 object as v1beta1: the annotations' contents move into the status (the annotations
 * stay, as upstream leaves them). Both only exist once the daemon has started the request, so an
 * object without a status gains none.
 */
export function crrToV1beta1(crr: ContainerRecreateRequest): ContainerRecreateRequest {
  const out: ContainerRecreateRequest = { ...crr, apiVersion: API_VERSION_V1BETA1 };
  if (crr.status === undefined) return out;
  const status = { ...crr.status };
  const snapshot = parseSnapshot(crr.metadata?.annotations?.[ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]);
  if (snapshot !== undefined) status.containerStatusSnapshot = snapshot;
  const acquired = crr.metadata?.annotations?.[ANNOTATION_CRR_UNREADY_ACQUIRED];
  if (acquired !== undefined && isRfc3339(acquired)) {
    status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== CONDITION_CRR_POD_UNREADY_ACQUIRED), unreadyAcquiredCondition(acquired)];
  }
  out.status = status;
  return out;
}

/**
 * The v1beta1 model as v1alpha1: the snapshot and the unready moment go back into their
 * annotations. Upstream writes back only the snapshot, so a v1alpha1 reader never learns that a
 * v1beta1 writer made the pod not-ready; kruise-ts writes both, and both versions tell the same.
 */
export function crrToV1alpha1(crr: ContainerRecreateRequest): ContainerRecreateRequest {
  const out: ContainerRecreateRequest = { ...crr, apiVersion: API_VERSION_V1ALPHA1 };
  if (crr.status === undefined) return out;
  const { containerStatusSnapshot, conditions: _conditions, ...status } = crr.status;
  out.status = status;
  const annotations = { ...(crr.metadata?.annotations ?? {}) };
  if (containerStatusSnapshot !== undefined) annotations[ANNOTATION_CRR_SYNC_CONTAINER_STATUSES] = JSON.stringify(containerStatusSnapshot);
  const acquired = unreadyAcquiredAt(crr);
  if (acquired !== undefined) annotations[ANNOTATION_CRR_UNREADY_ACQUIRED] = acquired;
  if (Object.keys(annotations).length > 0) out.metadata = { ...crr.metadata, annotations };
  return out;
}
