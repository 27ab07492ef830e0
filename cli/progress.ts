import type { ImagePullJob } from '../api/types/imagepulljob.js';
import type { NodeImage } from '../api/types/nodeimage.js';
import type { ContainerRecreateRequest } from '../api/types/containerrecreaterequest.js';
import { nameAndTag } from '../api/image-reference.js';
import { MESSAGE_PROGRESS_UNKNOWN, jobProgressPercent } from '../api/messages.js';

export interface NodeProgress {
  node: string;
  phase: string;
  /** Percent of the image's bytes on the node; undefined while the daemon cannot know it. */
  progress: number | undefined;
  message?: string;
}

/** Per-node progress of a job, read from the NodeImages whose tag the job owns. */
export function jobNodeProgress(job: ImagePullJob, nodeImages: Iterable<NodeImage>): NodeProgress[] {
  const progressOn = nodeProgressReader(job);
  const out: NodeProgress[] = [];
  for (const ni of nodeImages) {
    const p = progressOn(ni);
    if (p) out.push(p);
  }
  return out.sort((a, b) => a.node.localeCompare(b.node));
}

/** Reads the job's progress on one node; undefined where that node's NodeImage holds no tag of the job. */
export function nodeProgressReader(job: ImagePullJob): (ni: NodeImage) => NodeProgress | undefined {
  let ref: { name: string; tag: string };
  try {
    ref = nameAndTag(job.spec.image);
  } catch {
    return () => undefined;
  }
  const uid = job.metadata?.uid;
  return (ni) => {
    const tag = ni.spec?.images?.[ref.name]?.tags.find((t) => t.tag === ref.tag && t.ownerReferences?.some((o) => o.uid === uid));
    if (!tag) return undefined;
    const st = ni.status?.imageStatuses?.[ref.name]?.tags.find((t) => t.tag === ref.tag);
    const current = st && (st.version ?? 0) === (tag.version ?? 0) ? st : undefined;
    const unknown = current?.phase === 'Pulling' && current.message?.startsWith(MESSAGE_PROGRESS_UNKNOWN) === true;
    return {
      node: ni.metadata?.name ?? '',
      phase: current?.phase ?? 'Waiting',
      progress: unknown ? undefined : (current?.progress ?? 0),
      ...(current?.message ? { message: current.message } : {}),
    };
  };
}

export type JobVerdict = 'running' | 'succeeded' | 'failed';

/** A job is done when it has a completion time; it failed when any node failed. */
export function jobVerdict(job: ImagePullJob): JobVerdict {
  if (!job.status?.completionTime) return 'running';
  return (job.status.failed ?? 0) > 0 ? 'failed' : 'succeeded';
}

/**
 * The job's share of bytes pulled across its nodes, by the rule the manager's status message uses
 * (jobProgressPercent), read live from the NodeImages; a node whose progress is unknown counts nothing.
 */
export function jobPercent(job: ImagePullJob, nodes: readonly NodeProgress[]): number {
  const desired = Math.max(job.status?.desired ?? 0, nodes.length);
  if (desired === 0) return job.status?.completionTime ? 100 : 0;
  let finished = 0;
  let pulling = 0;
  for (const n of nodes) {
    if (n.phase === 'Succeeded' || n.phase === 'Failed') finished++;
    else pulling += n.progress ?? 0;
  }
  return jobProgressPercent(finished, pulling, desired);
}

export type CrrVerdict = 'running' | 'succeeded' | 'failed';

/** Completed does not mean success: only containers in Succeeded were recreated. */
export function crrVerdict(crr: ContainerRecreateRequest): CrrVerdict {
  if (crr.status?.phase !== 'Completed') return 'running';
  const states = crr.status.containerRecreateStates ?? [];
  const allOk = states.length === (crr.spec?.containers?.length ?? 0) && states.every((s) => s.phase === 'Succeeded');
  return allOk ? 'succeeded' : 'failed';
}
