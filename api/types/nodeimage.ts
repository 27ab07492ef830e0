import type { ObjectReference } from './core.js';
import type { ImagePullPhase, ImagePullPolicy, SyncStatusPhase } from '../enums.js';
import type { Condition, CustomObject, ReferenceObject, Rfc3339, SandboxConfig } from './common.js';

export interface ImageTagPullPolicy {
  /** int32; default 600. */
  timeoutSeconds?: number;
  /** int32; default 3. */
  backoffLimit?: number;
  /** int32; the tag is removed from the spec this long after it completed. */
  ttlSecondsAfterFinished?: number;
  /** int64; measured from the start of the pull. */
  activeDeadlineSeconds?: number;
}

export interface ImageTagSpec {
  /** A tag, or a digest ("sha256:…"). */
  tag: string;
  createdAt?: Rfc3339;
  pullPolicy?: ImageTagPullPolicy;
  /** The ImagePullJobs that want this tag. */
  ownerReferences?: ObjectReference[];
  /** int64; bumped to ask for a fresh pull round. */
  version?: number;
  imagePullPolicy?: ImagePullPolicy;
}

export interface ImageSpec {
  pullSecrets?: ReferenceObject[];
  tags: ImageTagSpec[];
  sandboxConfig?: SandboxConfig;
}

export interface NodeImageSpec {
  /** Keyed by familiar image name ("nginx", "ghcr.io/x/y"). */
  images?: Record<string, ImageSpec>;
}

export interface ImageTagStatus {
  tag: string;
  phase: ImagePullPhase;
  /** int32, 0–100. */
  progress?: number;
  startTime?: Rfc3339;
  completionTime?: Rfc3339;
  /** int64; the spec version this status belongs to. */
  version?: number;
  imageID?: string;
  message?: string;
}

export interface ImageStatus {
  tags: ImageTagStatus[];
}

export interface SyncStatus {
  syncAt?: Rfc3339;
  status?: SyncStatusPhase;
  message?: string;
}

export interface NodeImageStatus {
  desired: number;
  succeeded?: number;
  failed?: number;
  pulling?: number;
  /** Only filled by daemons that queue pulls (upstream 1.9+). */
  waiting?: number;
  imageStatuses?: Record<string, ImageStatus>;
  firstSyncStatus?: SyncStatus;
  /** kruise-ts only (OpenKruise's CRDs prune it): ImageFilesystemFull, written by the daemon. */
  conditions?: Condition[];
}

/** Cluster-scoped, one per Node and named after it. */
export interface NodeImage extends Omit<CustomObject<NodeImageSpec, NodeImageStatus>, 'spec'> {
  /** Absent on a freshly created NodeImage. */
  spec?: NodeImageSpec;
}
