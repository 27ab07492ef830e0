import type { ContainerPort, ExecAction, HTTPGetAction, TCPSocketAction } from './core.js';
import type {
  ContainerRecreateRequestContainerPhase,
  ContainerRecreateRequestFailurePolicy,
  ContainerRecreateRequestPhase,
} from '../enums.js';
import type { Condition, CustomObject, Rfc3339 } from './common.js';

/** The pod container's preStop hook, without the sleep action upstream's CRR type lacks. */
export interface ProbeHandler {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
}

/** The container instance the CRR was created against. */
export interface ContainerRecreateRequestContainerContext {
  /** "<runtime>://<id>". */
  containerID: string;
  restartCount: number;
}

export interface ContainerRecreateRequestContainer {
  name: string;
  /** Copied from the pod by the webhook; users must not set it. */
  preStop?: ProbeHandler;
  /** Copied from the pod by the webhook when preStop is httpGet; users must not set it. */
  ports?: ContainerPort[];
  /** Copied from the pod status by the webhook; users must not set it. */
  statusContext?: ContainerRecreateRequestContainerContext;
}

export interface ContainerRecreateRequestStrategy {
  /** Default Fail. */
  failurePolicy?: ContainerRecreateRequestFailurePolicy;
  orderedRecreate?: boolean;
  forceRecreate?: boolean;
  /** int64; default: the pod's terminationGracePeriodSeconds. */
  terminationGracePeriodSeconds?: number;
  /** int64; how long the pod is kept not-ready before the kill. */
  unreadyGracePeriodSeconds?: number;
  /** int32. */
  minStartedSeconds?: number;
}

export interface ContainerRecreateRequestSpec {
  podName: string;
  containers: ContainerRecreateRequestContainer[];
  strategy?: ContainerRecreateRequestStrategy;
  /** int64; from creation; at least 3. */
  activeDeadlineSeconds?: number;
  /** int32. */
  ttlSecondsAfterFinished?: number;
}

export interface ContainerRecreateRequestContainerRecreateState {
  name: string;
  phase: ContainerRecreateRequestContainerPhase;
  message?: string;
  isKilled?: boolean;
}

/**
 * The v1beta1 status, which kruise-ts works with whichever version the cluster serves (v1alpha1
 * keeps the last two fields in annotations; api/crr-conversion.ts maps between the two).
 */
export interface ContainerRecreateRequestStatus {
  phase: ContainerRecreateRequestPhase;
  completionTime?: Rfc3339;
  message?: string;
  containerRecreateStates?: ContainerRecreateRequestContainerRecreateState[];
  /** The pod's container statuses while Recreating, written by the manager for the daemon. */
  containerStatusSnapshot?: ContainerRecreateRequestSyncContainerStatus[];
  /** PodUnreadyAcquired: when the pod was made not-ready for unreadyGracePeriodSeconds. */
  conditions?: Condition[];
}

/** The status of one of the pod's containers as the manager copied it. */
export interface ContainerRecreateRequestSyncContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  containerID?: string;
}

export type ContainerRecreateRequest = CustomObject<ContainerRecreateRequestSpec, ContainerRecreateRequestStatus>;

/**
 * One holder in the JSON list that is the message of a pod's KruisePodReady condition; a CRR holds
 * the pod not-ready as {userAgent: "ContainerRecreateRequest", key: "<namespace>/<name>"}.
 */
export interface PodReadinessHolder {
  userAgent: string;
  key: string;
}
