// An ImageListPullJob's status from its children (upstream pkg/controller/imagelistpulljob/imagelistpulljob_controller.go). Pure: the caller passes the time.
import { COMPLETION_POLICY_NEVER } from '../../api/enums.js';
import { failedImageStatusMessage } from '../../api/messages.js';
import { formatTime } from '../../api/time.js';
import type { FailedImageStatus, ImageListPullJob, ImageListPullJobStatus } from '../../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';

/** A child is finished when it completed (Always) or every node finished (Never, which never completes). */
function finished(child: ImagePullJob): boolean {
  const s = child.status;
  if (!s) return false;
  if (child.spec.completionPolicy?.type !== COMPLETION_POLICY_NEVER) return s.completionTime !== undefined;
  return s.desired > 0 && (s.succeeded ?? 0) + (s.failed ?? 0) === s.desired;
}

/**
 * desired = images; active, completed and succeeded count children (those not started yet are
 * skipped); every child with a failed node is listed. An Always list completes when every image's
 * child did.
 */
export function listStatus(list: ImageListPullJob, children: ReadonlyMap<string, ImagePullJob>, nowMs: number): ImageListPullJobStatus {
  let active = 0;
  let completed = 0;
  let succeeded = 0;
  const failedImages: FailedImageStatus[] = [];
  for (const [image, child] of children) {
    const s = child.status;
    if (!s?.startTime) continue;
    if ((s.active ?? 0) > 0) active++;
    if ((s.failed ?? 0) > 0) {
      const name = child.metadata?.name ?? '';
      failedImages.push({ imagePullJob: name, name: image, message: failedImageStatusMessage(name) });
    }
    if (finished(child)) {
      completed++;
      if ((s.succeeded ?? 0) === s.desired) succeeded++;
    }
  }
  const desired = new Set(list.spec.images ?? []).size;
  failedImages.sort((a, b) => ((a.name ?? '') < (b.name ?? '') ? -1 : (a.name ?? '') > (b.name ?? '') ? 1 : 0));
  const done = list.spec.completionPolicy?.type !== COMPLETION_POLICY_NEVER && completed === desired;
  return {
    startTime: list.status?.startTime ?? formatTime(new Date(nowMs)),
    ...(done ? { completionTime: formatTime(new Date(nowMs)) } : {}),
    desired,
    active,
    completed,
    succeeded,
    ...(failedImages.length > 0 ? { failedImageStatuses: failedImages } : {}),
  };
}
