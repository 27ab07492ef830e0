// Where an ImagePullJob stands on each of its nodes, its status, and which nodes it may start next
// (upstream imagepulljob_controller.go calculateStatus, and syncNodeImages' parallelism rule). Pure: the caller passes the time.
import { COMPLETION_POLICY_NEVER, IMAGE_PULL_PHASE_FAILED, IMAGE_PULL_PHASE_PULLING, IMAGE_PULL_PHASE_SUCCEEDED } from '../../api/enums.js';
import { EMPTY_JOB_GRACE_SECONDS, MAX_IMAGES_PER_NODE_IMAGE } from '../../api/limits.js';
import { MESSAGE_JOB_COMPLETED, MESSAGE_JOB_DEADLINE_EXCEEDED, MESSAGE_PROGRESS_UNKNOWN, jobProgressMessage, withMissingNodes } from '../../api/messages.js';
import { formatTime } from '../../api/time.js';
import type { ImagePullJob, ImagePullJobStatus } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { timeMs } from '../../api/time.js';
import { ownedBy, policyFits, sameRef, tagStatusOf } from './desired.js';
import type { JobTarget } from './target.js';

/**
 * unsynced: the job's tag (or one of its secret references) is not on the node yet; active: its
 * round runs; succeeded / failed: its round finished; full: the image cannot be added, the
 * NodeImage already holds the most images it may; missing: a node named in selector.names has no
 * NodeImage (no such Node, or it was deleted).
 */
export type NodeState = 'unsynced' | 'active' | 'succeeded' | 'failed' | 'full' | 'missing';

export interface NodeView {
  name: string;
  state: NodeState;
  /** Synced, but the tag needs its policy raised (no new round, no slot). */
  stale: boolean;
  /** Active and pulling: the percentage of the image's bytes on the node, when the daemon knows it. */
  progress?: number;
}

/** The job's state on one node, read from its NodeImage. */
export function nodeView(ni: NodeImage, t: JobTarget): NodeView {
  const name = ni.metadata?.name ?? '';
  const entry = ni.spec?.images?.[t.image];
  if (!entry) {
    const full = Object.keys(ni.spec?.images ?? {}).length >= MAX_IMAGES_PER_NODE_IMAGE;
    return { name, state: full ? 'full' : 'unsynced', stale: false };
  }
  if (!t.secretRefs.every((r) => (entry.pullSecrets ?? []).some((s) => sameRef(s, r)))) return { name, state: 'unsynced', stale: false };
  const tag = (entry.tags ?? []).find((x) => x.tag === t.tag);
  if (!tag || !ownedBy(tag, t.uid)) return { name, state: 'unsynced', stale: false };
  const stale = !policyFits(tag, t, name);
  const status = tagStatusOf(ni, t.image, t.tag);
  if (!status || (status.version ?? 0) !== (tag.version ?? 0)) return { name, state: 'active', stale };
  if (status.phase === IMAGE_PULL_PHASE_SUCCEEDED) return { name, state: 'succeeded', stale };
  if (status.phase === IMAGE_PULL_PHASE_FAILED) return { name, state: 'failed', stale };
  const known = status.phase === IMAGE_PULL_PHASE_PULLING && !status.message?.startsWith(MESSAGE_PROGRESS_UNKNOWN);
  return known && (status.progress ?? 0) > 0 ? { name, state: 'active', stale, progress: Math.min(100, status.progress ?? 0) } : { name, state: 'active', stale };
}

export interface JobPlan {
  status: ImagePullJobStatus;
  /** Nodes to start now: at most parallelism minus what is active, and at most `maxDispatch`. */
  dispatch: string[];
  /** Parallelism left room for more nodes than `maxDispatch`: the next reconcile starts them. */
  more: boolean;
  /** Synced nodes whose tag policy must be raised. */
  refresh: string[];
  /** Nodes that failed because their NodeImage is full. */
  full: string[];
  /** Named nodes counted as failed because they do not exist. */
  missing: string[];
  /** This reconcile completes the job. */
  completed: boolean;
  deadlineExceeded: boolean;
  /** When to look again without any event: the deadline, or the end of the empty-job grace. */
  requeueAfterMs?: number;
}

/**
 * The job's new status and next dispatch. `nodes` are its selected nodes in dispatch order; a node
 * whose dispatch the cache has not shown yet must be passed as active. Dispatched nodes count as
 * active in the status, so the next reconcile, which sees them so, writes nothing new.
 */
export function planJob(job: ImagePullJob, nodes: readonly NodeView[], parallelism: number, nowMs: number, maxDispatch = Infinity): JobPlan {
  const never = job.spec.completionPolicy?.type === COMPLETION_POLICY_NEVER;
  const deadlineSeconds = never ? undefined : job.spec.completionPolicy?.activeDeadlineSeconds;
  const startMs = timeMs(job.status?.startTime) ?? nowMs;
  const startTime = job.status?.startTime ?? formatTime(new Date(nowMs));
  const succeeded: string[] = [];
  const failed: string[] = [];
  const active: string[] = [];
  const unsynced: string[] = [];
  let pullingPercent = 0;
  const full: string[] = [];
  const refresh: string[] = [];
  const missing: string[] = [];
  const absent: string[] = [];
  // A named node without a NodeImage may still be joining (its NodeImage comes once it has been
  // Ready a little while): it counts as failed only after the same grace an empty job gets.
  const missingGraceLeft = startMs + EMPTY_JOB_GRACE_SECONDS * 1000 - nowMs;
  for (const n of nodes) {
    if (n.stale) refresh.push(n.name);
    if (n.state === 'succeeded') succeeded.push(n.name);
    else if (n.state === 'failed') failed.push(n.name);
    else if (n.state === 'full') full.push(n.name);
    else if (n.state === 'missing') (missingGraceLeft > 0 ? absent : missing).push(n.name);
    else if (n.state === 'active') {
      active.push(n.name);
      pullingPercent += n.progress ?? 0;
    }
    else unsynced.push(n.name);
  }
  const desired = nodes.length;
  const failedNodes = [...failed, ...full, ...missing];
  // Every named node without a NodeImage, counted as failed yet or not: the message names them all.
  const notFound = [...missing, ...absent].sort();
  const base = { startTime, desired };
  const unfinished = active.length + unsynced.length + absent.length;

  if (deadlineSeconds !== undefined && unfinished > 0 && nowMs - startMs >= deadlineSeconds * 1000) {
    const all = [...failedNodes, ...active, ...unsynced, ...absent].sort();
    return {
      status: {
        ...base,
        completionTime: formatTime(new Date(nowMs)),
        active: 0,
        succeeded: succeeded.length,
        failed: all.length,
        ...(all.length > 0 ? { failedNodes: all } : {}),
        message: withMissingNodes(MESSAGE_JOB_DEADLINE_EXCEEDED, notFound),
      },
      dispatch: [],
      more: false,
      refresh: [],
      full,
      missing: notFound,
      completed: true,
      deadlineExceeded: true,
    };
  }

  const slots = Math.max(0, parallelism - active.length);
  const dispatch = unsynced.slice(0, Math.min(slots, maxDispatch));
  const more = dispatch.length < Math.min(slots, unsynced.length);
  const activeCount = active.length + dispatch.length;
  const waiting = unsynced.length - dispatch.length + absent.length;
  let completed = false;
  let requeueAfterMs: number | undefined;
  if (!never) {
    if (desired > 0) {
      completed = activeCount + waiting === 0;
    } else {
      // Upstream completes a job with no node at once (imagepulljob_controller.go: desired 0 is "job has completed"): pods may not be scheduled yet.
      const left = startMs + EMPTY_JOB_GRACE_SECONDS * 1000 - nowMs;
      completed = left <= 0;
      if (!completed) requeueAfterMs = left;
    }
    if (!completed && absent.length > 0) requeueAfterMs = missingGraceLeft;
    if (!completed && deadlineSeconds !== undefined) {
      const left = Math.max(1000, startMs + deadlineSeconds * 1000 - nowMs);
      requeueAfterMs = requeueAfterMs === undefined ? left : Math.min(requeueAfterMs, left);
    }
  }
  const sortedFailed = [...failedNodes].sort();
  return {
    status: {
      ...base,
      ...(completed ? { completionTime: formatTime(new Date(nowMs)) } : {}),
      active: activeCount,
      succeeded: succeeded.length,
      failed: sortedFailed.length,
      ...(sortedFailed.length > 0 ? { failedNodes: sortedFailed } : {}),
      message: withMissingNodes(completed ? MESSAGE_JOB_COMPLETED : jobProgressMessage(succeeded.length, sortedFailed.length, desired, pullingPercent), notFound),
    },
    dispatch,
    more,
    refresh,
    full,
    missing,
    completed,
    deadlineExceeded: false,
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  };
}
