// A stand-in for OpenKruise's CloneSet controller, for the demo on the local cluster, which does not
// run OpenKruise (kruise-ts provides only CloneSet image pre-download). It writes what that
// controller has written once an in-place rollout to a new template has updated its first pods,
// following upstream's sources:
// - a ControllerRevision per template, `<name>-<hash>`, with the template's labels and
//   controller.kubernetes.io/hash, data.spec.template with `$patch: replace`, owned by the CloneSet
//   (pkg/controller/cloneset/revision/cloneset_revision.go, k8s.io/kubernetes/pkg/controller/history);
// - pods labelled controller-revision-hash: <revision name> (GetPodRevision in
//   pkg/controller/cloneset/utils/cloneset_utils.go), owned by the CloneSet;
// - its status counted from those pods as calculateStatus in pkg/controller/cloneset/cloneset_status.go.
import { createHash } from 'node:crypto';
import { LABEL_CONTROLLER_REVISION_HASH, LABEL_REVISION_DATA_HASH } from '../api/metadata-keys.js';
import type { ControllerRevision, Pod, PodTemplateSpec } from '../api/types/core.js';
import type { CloneSet, CloneSetStatus } from '../api/types/workloads.js';
import type { KruiseApi } from '../kube/kruise.js';
import type { RestClient } from '../kube/rest.js';
import { core, Resource } from '../kube/resource.js';
import { eventuallyTrue } from './wait.js';

const ready = (p: Pod): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** calculateStatus of upstream's cloneset_status.go (minReadySeconds 0: available = ready). */
function cloneSetStatus(pods: Pod[], currentRevision: string, updateRevision: string, generation: number): CloneSetStatus & { availableReplicas: number } {
  const updated = pods.filter((p) => p.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] === updateRevision);
  const readyReplicas = pods.filter(ready).length;
  return {
    observedGeneration: generation,
    replicas: pods.length,
    readyReplicas,
    availableReplicas: readyReplicas,
    updatedReplicas: updated.length,
    updatedReadyReplicas: updated.filter(ready).length,
    currentRevision,
    updateRevision,
  };
}

/** A stable hash of the template, as the revision's name suffix and data-hash label (any stable value serves). */
function templateHash(t: PodTemplateSpec): string {
  return createHash('sha256').update(JSON.stringify(t)).digest('hex').slice(0, 10);
}

export interface Placement {
  node: string;
  /** On the update revision already (the rollout updated it) or still on the current one. */
  updated: boolean;
}

/**
 * Creates `cs` (its template is the update revision's) with the revisions of `oldTemplate` and its
 * own, a pod per placement, and once the pods are ready the status OpenKruise would write.
 * Resolves with the revision names.
 */
export async function inPlaceRolloutStarted(rest: RestClient, kruise: KruiseApi, cs: CloneSet, oldTemplate: PodTemplateSpec, placements: Placement[], timeoutMs: number): Promise<{ currentRevision: string; updateRevision: string }> {
  const cloneSets = new Resource<CloneSet>(rest, kruise.cloneSets);
  const revisions = new Resource<ControllerRevision>(rest, core.controllerrevisions);
  const pods = new Resource<Pod>(rest, core.pods);
  const namespace = cs.metadata?.namespace ?? 'default';
  const name = cs.metadata?.name ?? '';
  const created = await cloneSets.create(cs);
  const owner = { apiVersion: created.apiVersion ?? 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name, uid: created.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
  const revision = async (template: PodTemplateSpec, n: number): Promise<string> => {
    const hash = templateHash(template);
    const revName = `${name}-${hash}`;
    await revisions.create({
      metadata: { name: revName, namespace, labels: { ...(template.metadata?.labels ?? {}), [LABEL_REVISION_DATA_HASH]: hash }, ownerReferences: [owner] },
      revision: n,
      data: { spec: { template: { ...template, $patch: 'replace' } } },
    });
    return revName;
  };
  const currentRevision = await revision(oldTemplate, 1);
  const updateRevision = await revision(cs.spec.template, 2);
  const names: string[] = [];
  for (const [i, p] of placements.entries()) {
    const template = p.updated ? cs.spec.template : oldTemplate;
    const podName = `${name}-${i}`;
    await pods.create({
      metadata: { name: podName, namespace, labels: { ...(template.metadata?.labels ?? {}), [LABEL_CONTROLLER_REVISION_HASH]: p.updated ? updateRevision : currentRevision }, ownerReferences: [owner] },
      spec: { ...template.spec, nodeName: p.node, containers: template.spec?.containers ?? [] },
    });
    names.push(podName);
  }
  let live: Pod[] = [];
  const allReady = await eventuallyTrue(async () => {
    live = await Promise.all(names.map((n) => pods.get(namespace, n)));
    return live.every(ready);
  }, timeoutMs);
  if (!allReady) throw new Error(`the pods of CloneSet ${namespace}/${name} are not ready after ${timeoutMs} ms`);
  await cloneSets.updateStatus({ ...created, status: cloneSetStatus(live, currentRevision, updateRevision, created.metadata?.generation ?? 1) });
  return { currentRevision, updateRevision };
}
