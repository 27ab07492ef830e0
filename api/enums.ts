// Closed value sets of the API. Each list is the single source for the TypeScript union, the
// validation and the CRD schema's enum (a test keeps deploy/crds/ in line with these lists).

export const IMAGE_PULL_PHASE_WAITING = 'Waiting';
export const IMAGE_PULL_PHASE_PULLING = 'Pulling';
export const IMAGE_PULL_PHASE_SUCCEEDED = 'Succeeded';
export const IMAGE_PULL_PHASE_FAILED = 'Failed';
/** Phase of one image tag on one node (NodeImage status). */
export const IMAGE_PULL_PHASES = [
  IMAGE_PULL_PHASE_WAITING,
  IMAGE_PULL_PHASE_PULLING,
  IMAGE_PULL_PHASE_SUCCEEDED,
  IMAGE_PULL_PHASE_FAILED,
] as const;
export type ImagePullPhase = (typeof IMAGE_PULL_PHASES)[number];

const SYNC_STATUS_SUCCEEDED = 'Succeeded';
const SYNC_STATUS_FAILED = 'Failed';
/** NodeImage status.firstSyncStatus.status (declared upstream, never written). */
export const SYNC_STATUS_PHASES = [SYNC_STATUS_SUCCEEDED, SYNC_STATUS_FAILED] as const;
export type SyncStatusPhase = (typeof SYNC_STATUS_PHASES)[number];

const IMAGE_PULL_POLICY_ALWAYS = 'Always';
export const IMAGE_PULL_POLICY_IF_NOT_PRESENT = 'IfNotPresent';
export const IMAGE_PULL_POLICIES = [IMAGE_PULL_POLICY_ALWAYS, IMAGE_PULL_POLICY_IF_NOT_PRESENT] as const;
export type ImagePullPolicy = (typeof IMAGE_PULL_POLICIES)[number];

export const COMPLETION_POLICY_ALWAYS = 'Always';
export const COMPLETION_POLICY_NEVER = 'Never';
export const COMPLETION_POLICY_TYPES = [COMPLETION_POLICY_ALWAYS, COMPLETION_POLICY_NEVER] as const;
export type CompletionPolicyType = (typeof COMPLETION_POLICY_TYPES)[number];

export const CRR_PHASE_PENDING = 'Pending';
export const CRR_PHASE_RECREATING = 'Recreating';
export const CRR_PHASE_SUCCEEDED = 'Succeeded';
export const CRR_PHASE_FAILED = 'Failed';
export const CRR_PHASE_COMPLETED = 'Completed';
/**
 * Top-level CRR phase. Upstream only ever writes Pending, Recreating and Completed, but its type
 * also declares Succeeded and Failed, so they stay accepted.
 */
export const CRR_PHASES = [
  CRR_PHASE_PENDING,
  CRR_PHASE_RECREATING,
  CRR_PHASE_SUCCEEDED,
  CRR_PHASE_FAILED,
  CRR_PHASE_COMPLETED,
] as const;
export type ContainerRecreateRequestPhase = (typeof CRR_PHASES)[number];
/** Per-container recreation phase. */
export const CRR_CONTAINER_PHASES = [CRR_PHASE_PENDING, CRR_PHASE_RECREATING, CRR_PHASE_SUCCEEDED, CRR_PHASE_FAILED] as const;
export type ContainerRecreateRequestContainerPhase = (typeof CRR_CONTAINER_PHASES)[number];

export const CRR_FAILURE_POLICY_FAIL = 'Fail';
export const CRR_FAILURE_POLICY_IGNORE = 'Ignore';
export const CRR_FAILURE_POLICIES = [CRR_FAILURE_POLICY_FAIL, CRR_FAILURE_POLICY_IGNORE] as const;
export type ContainerRecreateRequestFailurePolicy = (typeof CRR_FAILURE_POLICIES)[number];

export const UPDATE_TYPE_RECREATE = 'ReCreate';
const UPDATE_TYPE_IN_PLACE_IF_POSSIBLE = 'InPlaceIfPossible';
const UPDATE_TYPE_IN_PLACE_ONLY = 'InPlaceOnly';
/** CloneSet updateStrategy.type and Advanced StatefulSet rollingUpdate.podUpdatePolicy. */
export const POD_UPDATE_POLICIES = [UPDATE_TYPE_RECREATE, UPDATE_TYPE_IN_PLACE_IF_POSSIBLE, UPDATE_TYPE_IN_PLACE_ONLY] as const;
export type PodUpdatePolicy = (typeof POD_UPDATE_POLICIES)[number];

const STATEFUL_SET_UPDATE_ROLLING = 'RollingUpdate';
export const STATEFUL_SET_UPDATE_ON_DELETE = 'OnDelete';
export const STATEFUL_SET_UPDATE_STRATEGY_TYPES = [STATEFUL_SET_UPDATE_ROLLING, STATEFUL_SET_UPDATE_ON_DELETE] as const;
export type StatefulSetUpdateStrategyType = (typeof STATEFUL_SET_UPDATE_STRATEGY_TYPES)[number];

const SELECTOR_OP_IN = 'In';
const SELECTOR_OP_NOT_IN = 'NotIn';
export const SELECTOR_OP_EXISTS = 'Exists';
export const SELECTOR_OP_DOES_NOT_EXIST = 'DoesNotExist';
export const LABEL_SELECTOR_OPERATORS = [
  SELECTOR_OP_IN,
  SELECTOR_OP_NOT_IN,
  SELECTOR_OP_EXISTS,
  SELECTOR_OP_DOES_NOT_EXIST,
] as const;

export function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}
