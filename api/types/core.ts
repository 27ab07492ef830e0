// The Kubernetes core types kruise-ts reads and writes, as they are on the wire (see Wire). Product
// code takes them from here rather than from client-node, so time fields are strings everywhere.
import type {
  V1Container,
  V1ContainerPort,
  V1ControllerRevision,
  V1ExecAction,
  V1HTTPGetAction,
  V1LabelSelector,
  V1Node,
  V1ObjectReference,
  V1Pod,
  V1PodCondition,
  V1PodStatus,
  V1PodTemplateSpec,
  V1Secret,
  V1TCPSocketAction,
} from '@kubernetes/client-node';
import type { Wire } from './common.js';

export type Container = Wire<V1Container>;
export type ContainerPort = Wire<V1ContainerPort>;
export type ControllerRevision = Wire<V1ControllerRevision>;
export type ExecAction = Wire<V1ExecAction>;
export type HTTPGetAction = Wire<V1HTTPGetAction>;
export type LabelSelector = Wire<V1LabelSelector>;
export type Node = Wire<V1Node>;
export type ObjectReference = Wire<V1ObjectReference>;
export type Pod = Wire<V1Pod>;
export type PodCondition = Wire<V1PodCondition>;
export type PodStatus = Wire<V1PodStatus>;
export type PodTemplateSpec = Wire<V1PodTemplateSpec>;
export type Secret = Wire<V1Secret>;
export type TCPSocketAction = Wire<V1TCPSocketAction>;
