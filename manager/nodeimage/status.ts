// The NodeImage controller's status pass: tags the daemon never answered, or that overran their
// deadline, are marked Failed so the jobs waiting on them can finish. Pure: time is a parameter.
import type { ObjectReference } from '../../api/types/core.js';
import { IMAGE_PULL_PHASE_FAILED, IMAGE_PULL_PHASE_PULLING, IMAGE_PULL_PHASE_SUCCEEDED, IMAGE_PULL_PHASE_WAITING } from '../../api/enums.js';
import { NODE_IMAGE_RESPONSE_TIMEOUT_SECONDS, NODE_NOT_READY_RESPONSE_TIMEOUT_SECONDS } from '../../api/limits.js';
import { MESSAGE_NODE_NOT_RESPONDED, MESSAGE_PULL_DEADLINE_EXCEEDED } from '../../api/messages.js';
import { sortByTag, tagEndMs } from '../../api/nodeimage.js';
import { formatTime } from '../../api/time.js';
import type { ImageStatus, ImageTagStatus, NodeImage, NodeImageStatus } from '../../api/types/nodeimage.js';
import { timeMs } from '../../api/time.js';

export interface FailedTag {
  image: string;
  tag: string;
  message: string;
  owners: ObjectReference[];
}

export interface TimeoutResult {
  /** The status to write, only when something was marked failed. */
  status?: NodeImageStatus;
  failed: FailedTag[];
  /** When the next tag would time out. */
  requeueAfterMs?: number;
}

/** The Node's readiness as the status pass needs it; undefined when there is no Node or no condition. */
export interface NodeReadiness {
  ready: boolean;
  sinceMs: number | undefined;
}

const final = (phase: string): boolean => phase === IMAGE_PULL_PHASE_SUCCEEDED || phase === IMAGE_PULL_PHASE_FAILED;

/**
 * Upstream nodeimage_controller.go, doUpdateNodeImage's status pass. A tag with no status for its version fails `node has not responded for a
 * long time` 10 minutes after createdAt, or after 1 minute when the Node was already not Ready when
 * the tag was written; a tag still running fails `pulling exceeds the activeDeadlineSeconds` 10
 * minutes after createdAt + activeDeadlineSeconds (tagEndMs: the daemon applies the same rule, so
 * this only decides for a daemon that is gone).
 */
export function timeoutStatus(ni: NodeImage, node: NodeReadiness | undefined, nowMs: number): TimeoutResult {
  const failed: FailedTag[] = [];
  let requeueAfterMs: number | undefined;
  const later = (ms: number): void => {
    requeueAfterMs = requeueAfterMs === undefined ? ms : Math.min(requeueAfterMs, ms);
  };
  const replaced = new Map<string, ImageTagStatus>();
  for (const [name, image] of Object.entries(ni.spec?.images ?? {})) {
    for (const tag of image.tags ?? []) {
      const createdAt = timeMs(tag.createdAt);
      if (createdAt === undefined) continue;
      const version = tag.version ?? 0;
      const end = tagEndMs(tag);
      const current = ni.status?.imageStatuses?.[name]?.tags?.find((t) => t.tag === tag.tag);
      let message: string | undefined;
      if (!current || (current.version ?? 0) !== version) {
        const notReadyBefore = node !== undefined && !node.ready && node.sinceMs !== undefined && node.sinceMs <= createdAt;
        const timeout = (notReadyBefore ? NODE_NOT_READY_RESPONSE_TIMEOUT_SECONDS : NODE_IMAGE_RESPONSE_TIMEOUT_SECONDS) * 1000;
        const left = createdAt + timeout - nowMs;
        if (left <= 0) message = MESSAGE_NODE_NOT_RESPONDED;
        else later(left);
      } else if (!final(current.phase) && end !== undefined) {
        const left = end - nowMs;
        if (left <= 0) message = MESSAGE_PULL_DEADLINE_EXCEEDED;
        else later(left);
      }
      if (message === undefined) continue;
      failed.push({ image: name, tag: tag.tag, message, owners: tag.ownerReferences ?? [] });
      const sameRound = current && (current.version ?? 0) === version ? current : undefined;
      replaced.set(`${name}\u0000${tag.tag}`, {
        tag: tag.tag,
        phase: IMAGE_PULL_PHASE_FAILED,
        version,
        ...(sameRound?.progress !== undefined ? { progress: sameRound.progress } : {}),
        ...(sameRound?.startTime ? { startTime: sameRound.startTime } : {}),
        completionTime: formatTime(new Date(nowMs)),
        message,
      });
    }
  }
  if (failed.length === 0) return { failed, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
  return { status: rebuild(ni, replaced), failed, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
}

/** The status with `replaced` entries swapped in, entries for tags not in the spec dropped, counts redone. */
function rebuild(ni: NodeImage, replaced: ReadonlyMap<string, ImageTagStatus>): NodeImageStatus {
  const images: Record<string, ImageStatus> = {};
  const counts = { succeeded: 0, failed: 0, pulling: 0, waiting: 0 };
  let desired = 0;
  for (const [name, image] of Object.entries(ni.spec?.images ?? {})) {
    const tags: ImageTagStatus[] = [];
    for (const tag of image.tags ?? []) {
      desired++;
      const s = replaced.get(`${name}\u0000${tag.tag}`) ?? ni.status?.imageStatuses?.[name]?.tags?.find((t) => t.tag === tag.tag);
      if (!s) continue;
      tags.push(s);
      if (s.phase === IMAGE_PULL_PHASE_SUCCEEDED) counts.succeeded++;
      else if (s.phase === IMAGE_PULL_PHASE_FAILED) counts.failed++;
      else if (s.phase === IMAGE_PULL_PHASE_PULLING) counts.pulling++;
      else if (s.phase === IMAGE_PULL_PHASE_WAITING) counts.waiting++;
    }
    if (tags.length > 0) images[name] = { tags: sortByTag(tags) };
  }
  const status: NodeImageStatus = {
    ...(ni.status?.firstSyncStatus ? { firstSyncStatus: ni.status.firstSyncStatus } : {}),
    desired,
    ...counts,
    ...(Object.keys(images).length > 0 ? { imageStatuses: images } : {}),
    ...(ni.status?.conditions !== undefined ? { conditions: ni.status.conditions } : {}),
  };
  return status;
}
