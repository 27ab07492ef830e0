// What one ImagePullJob asks of every node it selects: the NodeImage key and tag of its image, the
// ownerReference it leaves there, and the pull policy the tag carries.
import type { ObjectReference } from '../../api/types/core.js';
import { createHash } from 'node:crypto';
import { COMPLETION_POLICY_NEVER, IMAGE_PULL_POLICY_IF_NOT_PRESENT, type ImagePullPolicy } from '../../api/enums.js';
import { KIND_IMAGE_PULL_JOB } from '../../api/group-version.js';
import {
  ALWAYS_NODE_IMAGE_TTL_EXTRA_SECONDS,
  ALWAYS_NODE_IMAGE_TTL_JITTER_SECONDS,
  DEFAULT_PARALLELISM,
  DEFAULT_PULL_BACKOFF_LIMIT,
  DEFAULT_PULL_TIMEOUT_SECONDS,
  NEVER_NODE_IMAGE_MIN_DEADLINE_SECONDS,
  NEVER_NODE_IMAGE_TTL_JITTER_SECONDS,
  NEVER_NODE_IMAGE_TTL_SECONDS,
} from '../../api/limits.js';
import type { ReferenceObject, SandboxConfig } from '../../api/types/common.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { ImageTagPullPolicy } from '../../api/types/nodeimage.js';
import { InvalidReferenceError, nameAndTag } from '../../api/image-reference.js';

export interface JobTarget {
  /** "namespace/name". */
  key: string;
  uid: string;
  /** NodeImage key: the familiar image name. */
  image: string;
  /** Tag, or digest when the reference pins one. */
  tag: string;
  ownerRef: ObjectReference;
  /** References to the job's pull secrets in the daemon's secret namespace. */
  secretRefs: ReferenceObject[];
  imagePullPolicy: ImagePullPolicy;
  sandboxConfig?: SandboxConfig;
  never: boolean;
  timeoutSeconds: number;
  backoffLimit: number;
  /** The tag's activeDeadlineSeconds (Never: long enough for every attempt). */
  activeDeadlineSeconds?: number;
  /** TTL before jitter. */
  ttlBaseSeconds: number;
  /** Jitter added to the TTL per node: 0 up to this (exclusive). */
  ttlJitterSpanSeconds: number;
}

export interface TargetOptions {
  /** How long a Never job's finished tag stays before it expires and the job pulls it again. */
  neverRepullSeconds: number;
}

const DEFAULT_TARGET_OPTIONS: TargetOptions = { neverRepullSeconds: NEVER_NODE_IMAGE_TTL_SECONDS };

/** Never tags expire over upstream's ±600 s around a day; a shorter interval spreads by a tenth of it. */
function neverJitterSeconds(repullSeconds: number): number {
  return Math.min(NEVER_NODE_IMAGE_TTL_JITTER_SECONDS, Math.floor(repullSeconds / 10));
}

/** The job as the object of an event (cached list items carry no apiVersion and kind). */


export function jobKey(job: { metadata?: { namespace?: string; name?: string } }): string {
  return `${job.metadata?.namespace ?? ''}/${job.metadata?.name ?? ''}`;
}

/** The job's target, or why its image cannot be pulled (the webhook refuses such jobs). */
export function jobTarget(job: ImagePullJob, secretRefs: ReferenceObject[], jobApiVersion: string, opts: TargetOptions = DEFAULT_TARGET_OPTIONS): JobTarget | { invalid: string } {
  let ref: { name: string; tag: string };
  try {
    ref = nameAndTag(job.spec.image);
  } catch (err) {
    if (err instanceof InvalidReferenceError) return { invalid: err.message };
    throw err;
  }
  const timeoutSeconds = job.spec.pullPolicy?.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS;
  const backoffLimit = job.spec.pullPolicy?.backoffLimit ?? DEFAULT_PULL_BACKOFF_LIMIT;
  const never = job.spec.completionPolicy?.type === COMPLETION_POLICY_NEVER;
  const completion = job.spec.completionPolicy ?? {};
  // Upstream bounds a Never tag by one attempt's timeout only (#2071): every attempt counts.
  const activeDeadlineSeconds = never ? Math.max(NEVER_NODE_IMAGE_MIN_DEADLINE_SECONDS, timeoutSeconds * (backoffLimit + 1)) : completion.activeDeadlineSeconds;
  const neverJitter = neverJitterSeconds(opts.neverRepullSeconds);
  const ttlBaseSeconds = never
    ? opts.neverRepullSeconds - neverJitter
    : (completion.ttlSecondsAfterFinished ?? completion.activeDeadlineSeconds ?? timeoutSeconds * backoffLimit) + ALWAYS_NODE_IMAGE_TTL_EXTRA_SECONDS;
  const uid = job.metadata?.uid ?? '';
  return {
    key: jobKey(job),
    uid,
    image: ref.name,
    tag: ref.tag,
    ownerRef: {
      apiVersion: jobApiVersion,
      kind: KIND_IMAGE_PULL_JOB,
      name: job.metadata?.name ?? '',
      namespace: job.metadata?.namespace ?? '',
      uid,
    },
    secretRefs,
    imagePullPolicy: job.spec.imagePullPolicy ?? IMAGE_PULL_POLICY_IF_NOT_PRESENT,
    ...(job.spec.sandboxConfig ? { sandboxConfig: job.spec.sandboxConfig } : {}),
    never,
    timeoutSeconds,
    backoffLimit,
    ...(activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds } : {}),
    ttlBaseSeconds,
    ttlJitterSpanSeconds: never ? 2 * neverJitter : ALWAYS_NODE_IMAGE_TTL_JITTER_SECONDS,
  };
}

/**
 * The pull policy the job's tag carries on `node`. The TTL jitter spreads expirations over nodes;
 * it is derived from job and node, so every reconcile computes the same policy.
 */
export function tagPullPolicy(t: JobTarget, node: string): ImageTagPullPolicy {
  const span = t.ttlJitterSpanSeconds;
  const jitter = span > 0 ? createHash('sha256').update(`${t.uid}/${node}`).digest().readUInt32BE(0) % span : 0;
  return {
    timeoutSeconds: t.timeoutSeconds,
    backoffLimit: t.backoffLimit,
    ttlSecondsAfterFinished: t.ttlBaseSeconds + jitter,
    ...(t.activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds: t.activeDeadlineSeconds } : {}),
  };
}

/** spec.parallelism as a count: default 1; the webhook admits only non-negative integers. */
export function parallelismOf(job: ImagePullJob): number {
  const p = job.spec.parallelism;
  if (p === undefined || p === null) return DEFAULT_PARALLELISM;
  const n = typeof p === 'number' ? p : Number(p);
  return Number.isSafeInteger(n) && n >= 0 ? n : DEFAULT_PARALLELISM;
}
