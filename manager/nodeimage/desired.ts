// What the NodeImage controller wants a NodeImage to be: whether it should exist, and its spec once
// owners that are gone, expired tags and dangling secret references are taken out. Pure: the caller
// passes the time and answers for owners and secrets.
import type { Node, ObjectReference } from '../../api/types/core.js';
import { GROUP, KIND_IMAGE_PULL_JOB } from '../../api/group-version.js';
import { jsonEqual } from '../../api/json-equal.js';
import { LABEL_FAKE_NODE_IMAGE, LABEL_VIRTUAL_KUBELET_KEY, LABEL_VIRTUAL_KUBELET_VALUE } from '../../api/metadata-keys.js';
import { sortByTag } from '../../api/nodeimage.js';
import type { ReferenceObject } from '../../api/types/common.js';
import type { ImageSpec, ImageTagSpec, NodeImage, NodeImageSpec } from '../../api/types/nodeimage.js';
import { sameLabels } from '../../kube/labels.js';
import { timeMs } from '../../api/time.js';
import { isDeleting } from '../../api/object-meta.js';
import type { OwnerState } from './owners.js';

export type Lifecycle =
  | { action: 'delete' }
  | { action: 'create'; labels: Record<string, string> }
  /** The Node is Ready but not for long enough yet. */
  | { action: 'wait'; afterMs: number }
  | { action: 'none' }
  | { action: 'sync' };

export function isVirtualKubelet(node: Node): boolean {
  return node.metadata?.labels?.[LABEL_VIRTUAL_KUBELET_KEY] === LABEL_VIRTUAL_KUBELET_VALUE;
}

function isFakeNodeImage(ni: NodeImage): boolean {
  return ni.metadata?.labels?.[LABEL_FAKE_NODE_IMAGE] !== undefined;
}

/**
 * The Node's Ready condition: ready or not, and since when (ms). Undefined when the Node reports
 * no Ready condition (nothing is known).
 */
export function readiness(node: Node | undefined): { ready: boolean; sinceMs: number | undefined } | undefined {
  const c = node?.status?.conditions?.find((x) => x.type === 'Ready');
  if (!c) return undefined;
  return { ready: c.status === 'True', sinceMs: timeMs(c.lastTransitionTime) };
}

/** Whether the NodeImage should be created, deleted, waited for or synced (upstream pkg/controller/nodeimage/nodeimage_controller.go, the start of doReconcile). */
export function lifecycle(node: Node | undefined, ni: NodeImage | undefined, nowMs: number, creationDelaySeconds: number): Lifecycle {
  if (!node || isDeleting(node)) {
    if (!ni || isDeleting(ni)) return { action: 'none' };
    return isFakeNodeImage(ni) ? { action: 'sync' } : { action: 'delete' };
  }
  if (ni) return isDeleting(ni) ? { action: 'none' } : { action: 'sync' };
  if (isVirtualKubelet(node)) return { action: 'none' };
  const r = readiness(node);
  if (!r?.ready) return { action: 'none' };
  const readyForMs = r.sinceMs === undefined ? Infinity : nowMs - r.sinceMs;
  const delayMs = creationDelaySeconds * 1000;
  if (readyForMs >= delayMs) return { action: 'create', labels: { ...(node.metadata?.labels ?? {}) } };
  return { action: 'wait', afterMs: delayMs - readyForMs };
}

function isImagePullJobRef(ref: ObjectReference): boolean {
  const group = (ref.apiVersion ?? '').split('/')[0];
  return ref.kind === KIND_IMAGE_PULL_JOB && group === GROUP;
}

export interface SpecLookups {
  /** Whether the ImagePullJob an ownerReference names still exists (same UID, not being deleted), and whether it is an Always job still running. */
  owner(ref: ObjectReference): OwnerState;
  /** Whether a pull secret a NodeImage image references still exists; 'unknown' keeps the reference. */
  secret(ref: ReferenceObject): 'present' | 'gone' | 'unknown';
}

export interface RemovedTag {
  image: string;
  tag: string;
  why: 'no createdAt' | 'owners gone' | 'ttl expired';
}

export interface CleanedSpec {
  spec: NodeImageSpec;
  /** The Node's labels when they differ from the NodeImage's. */
  labels?: Record<string, string>;
  changed: boolean;
  removed: RemovedTag[];
  /** When the next tag expires. */
  requeueAfterMs?: number;
}

function completionOf(ni: NodeImage, image: string, tag: ImageTagSpec): number | undefined {
  const s = ni.status?.imageStatuses?.[image]?.tags?.find((t) => t.tag === tag.tag);
  if (!s || (s.version ?? 0) !== (tag.version ?? 0)) return undefined;
  return timeMs(s.completionTime);
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/**
 * The spec pass (upstream nodeimage_controller.go, doUpdateNodeImage): tags without createdAt go; ImagePullJob owners that are gone
 * go, and so does a tag that had owners and has none left; a finished tag goes once its
 * ttlSecondsAfterFinished has passed and no Always job owning it is still running; references to pull secrets that are gone go; empty images go.
 * `nodeLabels` (absent for a NodeImage without a Node) replace the NodeImage's labels.
 */
export function cleanSpec(ni: NodeImage, nodeLabels: Record<string, string> | undefined, lookups: SpecLookups, nowMs: number): CleanedSpec {
  const removed: RemovedTag[] = [];
  let requeueAfterMs: number | undefined;
  const images: Record<string, ImageSpec> = {};
  for (const [name, image] of Object.entries(ni.spec?.images ?? {})) {
    const tags: ImageTagSpec[] = [];
    for (const tag of image.tags ?? []) {
      if (!tag.createdAt) {
        removed.push({ image: name, tag: tag.tag, why: 'no createdAt' });
        continue;
      }
      const owners = tag.ownerReferences ?? [];
      const kept = owners.filter((ref) => !isImagePullJobRef(ref) || lookups.owner(ref) !== 'gone');
      if (owners.length > 0 && kept.length === 0) {
        removed.push({ image: name, tag: tag.tag, why: 'owners gone' });
        continue;
      }
      const ttl = tag.pullPolicy?.ttlSecondsAfterFinished;
      const completedAt = completionOf(ni, name, tag);
      // An Always job still running counts this node as done only while its tag stays: dropped at
      // its TTL, the job would add it again and pull once more (upstream does, so a job that runs
      // longer than the TTL on a large cluster moves its counts backwards and may never finish).
      // The TTL is held until the job completes; the job's completion requeues this NodeImage.
      const held = kept.some((ref) => isImagePullJobRef(ref) && lookups.owner(ref) === 'running');
      if (ttl !== undefined && completedAt !== undefined && !held) {
        const left = completedAt + ttl * 1000 - nowMs;
        if (left <= 0) {
          removed.push({ image: name, tag: tag.tag, why: 'ttl expired' });
          continue;
        }
        requeueAfterMs = minDefined(requeueAfterMs, left);
      }
      tags.push(kept.length === owners.length ? tag : { ...tag, ownerReferences: kept });
    }
    if (tags.length === 0) continue;
    const out: ImageSpec = { ...image, tags: sortByTag(tags) };
    if (image.pullSecrets !== undefined) {
      const secrets = image.pullSecrets.filter((ref) => lookups.secret(ref) !== 'gone');
      if (secrets.length > 0) out.pullSecrets = secrets;
      else delete out.pullSecrets;
    }
    images[name] = out;
  }
  const spec: NodeImageSpec = Object.keys(images).length > 0 ? { ...ni.spec, images } : withoutImages(ni.spec);
  const labelsDiffer = nodeLabels !== undefined && !sameLabels(nodeLabels, ni.metadata?.labels);
  const changed = labelsDiffer || !jsonEqual(normalized(spec), normalized(ni.spec));
  return { spec, changed, removed, ...(labelsDiffer ? { labels: { ...nodeLabels } } : {}), ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
}

function withoutImages(spec: NodeImageSpec | undefined): NodeImageSpec {
  const { images: _images, ...rest } = spec ?? {};
  return rest;
}

/** An empty images map means the same as none. */
function normalized(spec: NodeImageSpec | undefined): NodeImageSpec {
  return spec?.images && Object.keys(spec.images).length > 0 ? spec : withoutImages(spec);
}

/** Every ImagePullJob ownerReference in the spec. */
export function jobOwnerRefs(ni: NodeImage | undefined): ObjectReference[] {
  const out: ObjectReference[] = [];
  for (const image of Object.values(ni?.spec?.images ?? {})) {
    for (const tag of image.tags ?? []) for (const ref of tag.ownerReferences ?? []) if (isImagePullJobRef(ref)) out.push(ref);
  }
  return out;
}

/** Every pull-secret reference in the spec. */
export function pullSecretRefs(ni: NodeImage | undefined): ReferenceObject[] {
  return Object.values(ni?.spec?.images ?? {}).flatMap((image) => image.pullSecrets ?? []);
}
