// The parts of the Kruise workloads that the manager reads for image pre-download. These objects
// carry many more fields; only the ones kruise-ts consumes are modelled.
import type { LabelSelector, PodTemplateSpec } from './core.js';
import type { PodUpdatePolicy, StatefulSetUpdateStrategyType } from '../enums.js';
import type { IntOrString, CustomObject } from './common.js';

export interface CloneSetUpdateStrategy {
  type?: PodUpdatePolicy;
  partition?: IntOrString;
  maxUnavailable?: IntOrString;
  maxSurge?: IntOrString;
  paused?: boolean;
}

export interface CloneSetSpec {
  replicas?: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
  updateStrategy?: CloneSetUpdateStrategy;
}

export interface CloneSetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas: number;
  updatedReplicas: number;
  updatedReadyReplicas: number;
  currentRevision?: string;
  updateRevision?: string;
}

/** apps.kruise.io/v1alpha1 CloneSet. */
export type CloneSet = CustomObject<CloneSetSpec, CloneSetStatus>;

export interface StatefulSetRollingUpdateStrategy {
  partition?: number;
  maxUnavailable?: IntOrString;
  podUpdatePolicy?: PodUpdatePolicy;
}

export interface StatefulSetUpdateStrategy {
  type?: StatefulSetUpdateStrategyType;
  rollingUpdate?: StatefulSetRollingUpdateStrategy;
}

export interface StatefulSetSpec {
  replicas?: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
  updateStrategy?: StatefulSetUpdateStrategy;
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas?: number;
  availableReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  updatedReadyReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
}

/** apps.kruise.io/v1beta1 Advanced StatefulSet. */
export type AdvancedStatefulSet = CustomObject<StatefulSetSpec, StatefulSetStatus>;

