// How an ImagePullJob's wish is written into one NodeImage (upstream pkg/controller/imagepulljob/imagepulljob_controller.go, syncNodeImages): the image entry, the
// job's pull-secret references, and the tag with the job among its owners. Pure and idempotent, so
// a write that met a conflict re-applies it to the fresh object without losing anyone else's tags.
import { IMAGE_PULL_PHASE_FAILED, IMAGE_PULL_PHASE_SUCCEEDED } from '../../api/enums.js';
import { jsonEqual } from '../../api/json-equal.js';
import { MAX_IMAGES_PER_NODE_IMAGE } from '../../api/limits.js';
import { sortByTag } from '../../api/nodeimage.js';
import { formatTime } from '../../api/time.js';
import type { ReferenceObject } from '../../api/types/common.js';
import type { ImageSpec, ImageTagPullPolicy, ImageTagSpec, ImageTagStatus, NodeImage, NodeImageSpec } from '../../api/types/nodeimage.js';
import { tagPullPolicy, type JobTarget } from './target.js';

export type ApplyResult = { spec: NodeImageSpec } | 'unchanged' | 'full';

export function sameRef(a: ReferenceObject, b: ReferenceObject): boolean {
  return a.namespace === b.namespace && a.name === b.name;
}

export function tagStatusOf(ni: NodeImage, image: string, tag: string): ImageTagStatus | undefined {
  return ni.status?.imageStatuses?.[image]?.tags?.find((t) => t.tag === tag);
}

export function ownedBy(tag: ImageTagSpec, uid: string): boolean {
  return (tag.ownerReferences ?? []).some((o) => o.uid === uid);
}

/** The round the tag's current version started has finished (Succeeded or Failed). */
function roundFinished(tag: ImageTagSpec, status: ImageTagStatus | undefined): 'Succeeded' | 'Failed' | undefined {
  if (!status || (status.version ?? 0) !== (tag.version ?? 0)) return undefined;
  return status.phase === IMAGE_PULL_PHASE_SUCCEEDED || status.phase === IMAGE_PULL_PHASE_FAILED ? status.phase : undefined;
}

/** Whether the job owns the tag alone: then the tag's policy is exactly the job's. */
function soleOwner(tag: ImageTagSpec, uid: string): boolean {
  const owners = tag.ownerReferences ?? [];
  return owners.length > 0 && owners.every((o) => o.uid === uid);
}

/**
 * Whether the tag's policy is what the job asks for: exactly, when the job owns the tag alone (an
 * edit that lowers timeoutSeconds or backoffLimit takes effect too, kruise#2221); when it shares
 * it, at least as long (no owner gets less than it asked for).
 */
export function policyFits(tag: ImageTagSpec, t: JobTarget, node: string): boolean {
  if (soleOwner(tag, t.uid)) return jsonEqual(tag.pullPolicy ?? {}, tagPullPolicy(t, node)) && tag.imagePullPolicy === t.imagePullPolicy;
  const p = tag.pullPolicy ?? {};
  const deadlineOk = t.activeDeadlineSeconds === undefined || p.activeDeadlineSeconds === undefined || p.activeDeadlineSeconds >= t.activeDeadlineSeconds;
  return (p.timeoutSeconds ?? 0) >= t.timeoutSeconds && (p.backoffLimit ?? 0) >= t.backoffLimit && deadlineOk && (tag.imagePullPolicy === t.imagePullPolicy || tag.imagePullPolicy === 'Always');
}

/** A policy good for every owner: the longest timeout, retries, deadline (none beats any) and TTL. */
function mergedPolicy(current: ImageTagPullPolicy | undefined, wanted: ImageTagPullPolicy): ImageTagPullPolicy {
  const c = current ?? {};
  const max = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined || b === undefined ? undefined : Math.max(a, b));
  const deadline = max(c.activeDeadlineSeconds, wanted.activeDeadlineSeconds);
  const ttl = Math.max(c.ttlSecondsAfterFinished ?? 0, wanted.ttlSecondsAfterFinished ?? 0);
  return {
    timeoutSeconds: Math.max(c.timeoutSeconds ?? 0, wanted.timeoutSeconds ?? 0),
    backoffLimit: Math.max(c.backoffLimit ?? 0, wanted.backoffLimit ?? 0),
    ttlSecondsAfterFinished: ttl,
    ...(deadline !== undefined ? { activeDeadlineSeconds: deadline } : {}),
  };
}

/**
 * Puts the job's tag into the NodeImage. A new tag starts one version past any status left for it.
 * A job joining a tag another job owns shares a round still running; a finished round is started
 * anew for it (upstream always starts anew). A job that owns the tag but whose secrets were missing
 * gets them added and, unless the round succeeded, a new round that uses them (upstream v1.8 never
 * wrote them, #1656). A tag's policy follows its only owner's edits, up or down; policies of shared
 * tags are merged so no owner gets less than it asked for (upstream: the first owner's wins and
 * edits change nothing, #2221). 'full' when the image would be the 257th.
 */
export function applyJobTag(ni: NodeImage, t: JobTarget, nowMs: number): ApplyResult {
  const node = ni.metadata?.name ?? '';
  const images = { ...(ni.spec?.images ?? {}) };
  const existing = images[t.image];
  if (!existing && Object.keys(images).length >= MAX_IMAGES_PER_NODE_IMAGE) return 'full';
  const entry: ImageSpec = existing ? { ...existing, tags: [...(existing.tags ?? [])] } : { tags: [] };
  const secrets = [...(entry.pullSecrets ?? [])];
  const missing = t.secretRefs.filter((r) => !secrets.some((s) => sameRef(s, r)));
  if (missing.length > 0) entry.pullSecrets = [...secrets, ...missing];
  // A job without a sandboxConfig leaves another job's in place (upstream clears it: last writer wins).
  if (t.sandboxConfig) entry.sandboxConfig = t.sandboxConfig;

  const now = formatTime(new Date(nowMs));
  const wanted = tagPullPolicy(t, node);
  const status = tagStatusOf(ni, t.image, t.tag);
  const i = entry.tags.findIndex((x) => x.tag === t.tag);
  const current = i >= 0 ? entry.tags[i] : undefined;
  if (!current) {
    entry.tags.push({
      tag: t.tag,
      createdAt: now,
      pullPolicy: wanted,
      ownerReferences: [t.ownerRef],
      version: status?.version !== undefined ? status.version + 1 : 0,
      imagePullPolicy: t.imagePullPolicy,
    });
  } else {
    const next: ImageTagSpec = { ...current };
    const finished = roundFinished(current, status);
    let newRound = false;
    if (!ownedBy(current, t.uid)) {
      next.ownerReferences = [...(current.ownerReferences ?? []), t.ownerRef];
      newRound = finished !== undefined;
    } else if (missing.length > 0) {
      newRound = finished !== IMAGE_PULL_PHASE_SUCCEEDED;
    }
    const alone = soleOwner(next, t.uid);
    if (!policyFits(next, t, node)) {
      next.pullPolicy = alone ? wanted : mergedPolicy(current.pullPolicy, wanted);
      if (alone || t.imagePullPolicy === 'Always') next.imagePullPolicy = t.imagePullPolicy;
    }
    if (newRound) {
      next.version = Math.max(current.version ?? 0, status?.version ?? 0) + 1;
      next.createdAt = now;
      next.imagePullPolicy = t.imagePullPolicy;
      next.pullPolicy = alone ? wanted : mergedPolicy(next.pullPolicy, wanted);
    }
    entry.tags[i] = next;
  }
  entry.tags = sortByTag(entry.tags);
  if (existing && jsonEqual(entry, existing)) return 'unchanged';
  images[t.image] = entry;
  return { spec: { ...ni.spec, images } };
}

/**
 * Takes the job off a node it no longer selects, where its tag's round is still running (so the pull
 * stops); a finished tag stays for its TTL. The tag goes with its last owner, the image with its
 * last tag. Undefined when there is nothing to take.
 */
export function releaseJobTag(ni: NodeImage, t: JobTarget): NodeImageSpec | undefined {
  const existing = ni.spec?.images?.[t.image];
  const current = existing?.tags?.find((x) => x.tag === t.tag);
  if (!existing || !current || !ownedBy(current, t.uid)) return undefined;
  if (roundFinished(current, tagStatusOf(ni, t.image, t.tag)) !== undefined) return undefined;
  const owners = (current.ownerReferences ?? []).filter((o) => o.uid !== t.uid);
  const tags = owners.length > 0 ? existing.tags.map((x) => (x === current ? { ...current, ownerReferences: owners } : x)) : existing.tags.filter((x) => x !== current);
  const images = { ...(ni.spec?.images ?? {}) };
  if (tags.length > 0) images[t.image] = { ...existing, tags };
  else delete images[t.image];
  return { ...ni.spec, images };
}
