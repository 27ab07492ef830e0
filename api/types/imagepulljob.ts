import type { LabelSelector } from './core.js';
import type { CompletionPolicyType, ImagePullPolicy } from '../enums.js';
import type { IntOrString, CustomObject, Rfc3339, SandboxConfig } from './common.js';

export interface PullPolicy {
  /** int32; default 600. */
  timeoutSeconds?: number;
  /** int32; default 3. */
  backoffLimit?: number;
}

export interface CompletionPolicy {
  /** Default Always. */
  type?: CompletionPolicyType;
  /** int64; Always only. */
  activeDeadlineSeconds?: number;
  /** int32; Always only. */
  ttlSecondsAfterFinished?: number;
}

/** Nodes by name, or by a label selector on NodeImage (= Node) labels; not both. */
export interface ImagePullJobNodeSelector extends LabelSelector {
  names?: string[];
}

/** Pods in the job's namespace whose nodes should pull the image. */
export type ImagePullJobPodSelector = LabelSelector;

/** The part of the spec ImagePullJob and ImageListPullJob share. */
export interface ImagePullJobTemplate {
  /** Secret names in the job's namespace. */
  pullSecrets?: string[];
  /** Absent: every node. */
  selector?: ImagePullJobNodeSelector;
  podSelector?: ImagePullJobPodSelector;
  /** Non-negative integer; default 1; 0 pauses the job. */
  parallelism?: IntOrString;
  pullPolicy?: PullPolicy;
  /** Required by the schema; the webhook adds it when missing. */
  completionPolicy: CompletionPolicy;
  sandboxConfig?: SandboxConfig;
  imagePullPolicy?: ImagePullPolicy;
}

export interface ImagePullJobSpec extends ImagePullJobTemplate {
  image: string;
}

export interface ImagePullJobStatus {
  startTime?: Rfc3339;
  completionTime?: Rfc3339;
  desired: number;
  active?: number;
  succeeded?: number;
  failed?: number;
  failedNodes?: string[];
  message?: string;
}

export type ImagePullJob = CustomObject<ImagePullJobSpec, ImagePullJobStatus>;
