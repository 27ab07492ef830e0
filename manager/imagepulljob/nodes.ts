// Which nodes an ImagePullJob pulls on (upstream imagepulljob_utils.go, getTargetNodes): nodes of the job's pods, named nodes,
// nodes whose labels match, or every node; a node counts once it has a NodeImage.
import type { Pod } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { selectorMatches } from '../../kube/labels.js';
import { isDeleting } from '../../api/object-meta.js';


/** What selection reads: the caches of NodeImages and pods. */
export interface NodeSource {
  nodeImage(name: string): NodeImage | undefined;
  nodeImages(): readonly NodeImage[];
  /** Pods of a namespace. */
  pods(namespace: string): readonly Pod[];
}

/** Running or pending, and not being deleted (kubecontroller.IsPodActive). */
export function isActivePod(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !isDeleting(pod);
}

/** Whether a pod makes its node a target of a podSelector job. */
export function podSelects(job: ImagePullJob, pod: Pod): boolean {
  const selector = job.spec.podSelector;
  if (!selector || pod.metadata?.namespace !== job.metadata?.namespace) return false;
  return isActivePod(pod) && !!pod.spec?.nodeName && selectorMatches(selector, pod.metadata?.labels);
}

/**
 * Whether the job selects a node by its NodeImage (not for podSelector jobs, which select through
 * pods). An empty label selector matches every node both here and when listing (upstream matches
 * nothing in its event handlers, so such jobs missed new nodes).
 */
export function selectsNodeImage(job: ImagePullJob, ni: NodeImage): boolean {
  const selector = job.spec.selector;
  if (job.spec.podSelector) return false;
  if (!selector) return true;
  if (selector.names) return selector.names.includes(ni.metadata?.name ?? '');
  return selectorMatches(selector, ni.metadata?.labels);
}

/** The job's nodes, sorted by name so every reconcile dispatches in the same order. */
export function selectNodes(job: ImagePullJob, src: NodeSource): NodeImage[] {
  let out: NodeImage[];
  if (job.spec.podSelector) {
    const names = new Set<string>();
    for (const pod of src.pods(job.metadata?.namespace ?? '')) if (podSelects(job, pod)) names.add(pod.spec?.nodeName ?? '');
    out = [...names].map((n) => src.nodeImage(n)).filter((ni): ni is NodeImage => ni !== undefined);
  } else if (job.spec.selector?.names) {
    out = [...new Set(job.spec.selector.names)].map((n) => src.nodeImage(n)).filter((ni): ni is NodeImage => ni !== undefined);
  } else {
    out = src.nodeImages().filter((ni) => selectsNodeImage(job, ni));
  }
  return out.filter((ni) => !isDeleting(ni)).sort((a, b) => byName(a.metadata?.name ?? '', b.metadata?.name ?? ''));
}

/**
 * Nodes the job names in selector.names that have no NodeImage (no such Node, or it went away):
 * upstream drops them silently; the job reports them instead.
 */
export function missingNamedNodes(job: ImagePullJob, src: NodeSource): string[] {
  if (job.spec.podSelector || !job.spec.selector?.names) return [];
  return [...new Set(job.spec.selector.names)].filter((n) => {
    const ni = src.nodeImage(n);
    return ni === undefined || isDeleting(ni);
  }).sort(byName);
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
