import type { Condition } from '../../api/types/common.js';
import type { ImageStatus, ImageTagStatus, NodeImageSpec, NodeImageStatus } from '../../api/types/nodeimage.js';
import { sortByTag } from '../../api/nodeimage.js';
import { desiredTags } from './plan.js';
import type { TagState } from './state.js';

function tagStatus(s: TagState): ImageTagStatus {
  // Empty strings are left out, as Go's omitempty does (and Kubernetes 1.20 rejects them in CRs).
  return {
    tag: s.tag,
    phase: s.phase,
    progress: s.progress,
    version: s.version,
    ...(s.startTime ? { startTime: s.startTime } : {}),
    ...(s.completionTime ? { completionTime: s.completionTime } : {}),
    ...(s.imageID ? { imageID: s.imageID } : {}),
    ...(s.message ? { message: s.message } : {}),
  };
}

/**
 * The NodeImage status for a spec and what the daemon knows: one entry per spec tag that has a
 * state for its current version, sorted by tag, with counts, and the daemon's `conditions`. Fields
 * this daemon does not own (such as firstSyncStatus) are carried over from `current`.
 */
export function buildStatus(spec: NodeImageSpec | undefined, states: ReadonlyMap<string, TagState>, current?: NodeImageStatus, conditions?: Condition[]): NodeImageStatus {
  const desired = desiredTags(spec);
  const images: Record<string, ImageStatus> = {};
  const counts = { succeeded: 0, failed: 0, pulling: 0, waiting: 0 };
  for (const d of desired) {
    const s = states.get(d.key);
    if (!s || s.version !== d.version) continue;
    (images[d.image] ??= { tags: [] }).tags.push(tagStatus(s));
    if (s.phase === 'Succeeded') counts.succeeded++;
    else if (s.phase === 'Failed') counts.failed++;
    else if (s.phase === 'Pulling') counts.pulling++;
    else counts.waiting++;
  }
  for (const img of Object.values(images)) img.tags = sortByTag(img.tags);
  const ownConditions = conditions ?? current?.conditions;
  return {
    ...(current?.firstSyncStatus ? { firstSyncStatus: current.firstSyncStatus } : {}),
    desired: desired.length,
    ...counts,
    ...(Object.keys(images).length > 0 ? { imageStatuses: images } : {}),
    // The daemon's own conditions once it has an opinion; until then (a restart) what is stored.
    ...(ownConditions !== undefined ? { conditions: ownConditions } : {}),
  };
}
