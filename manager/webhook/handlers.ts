import type { Node, Pod } from '../../api/types/core.js';
import { admit, reject, type AdmissionResult } from '../../api/admission.js';
import { admitContainerRecreateRequestCreate, admitContainerRecreateRequestUpdate } from '../../api/crr-admission.js';
import { defaultImageListPullJob, validateImageListPullJob } from '../../api/imagelistpulljob.js';
import { defaultImagePullJob, validateImagePullJob } from '../../api/imagepulljob.js';
import { defaultNodeImage, validateNodeImage } from '../../api/nodeimage.js';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';
import type { ImageListPullJob } from '../../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { ApiError, type RestClient } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { WEBHOOK_PATHS } from './configurations.js';
import { ownNodeHandler } from './ownnode.js';
import type { AdmissionHandler, AdmissionRequest } from './server.js';

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Refuses what is not even shaped like an object of its kind (the schema would refuse it later). */
function shaped<T>(req: AdmissionRequest, what: string): T | AdmissionResult<unknown> {
  if (!isObject(req.object)) return reject(400, [`${what}: the request carries no object`]);
  const spec = req.object['spec'];
  if (spec !== undefined && spec !== null && !isObject(spec)) return reject(400, ['spec: must be an object']);
  return req.object as unknown as T;
}

function isResult(v: unknown): v is AdmissionResult<unknown> {
  return isObject(v) && typeof v['allowed'] === 'boolean' && ('object' in v || 'message' in v);
}

/** A validating answer: the object unchanged (no patch) or the refusal. */
function validated(obj: unknown, errors: string[]): AdmissionResult<unknown> {
  return errors.length > 0 ? reject(400, errors) : admit(obj);
}

function old<T>(req: AdmissionRequest): T | undefined {
  return req.operation === 'UPDATE' && isObject(req.oldObject) ? (req.oldObject as unknown as T) : undefined;
}

/**
 * Reads for an admission decision go ahead of the manager's other calls under its API budget: the
 * API server waits on the webhook at most 10 s, and a burst of CRRs queued behind controller writes
 * was refused with "context deadline exceeded".
 */
async function getOrUndefined<T extends KubeObject>(res: Resource<T>, namespace: string | undefined, name: string, fromCache = false): Promise<T | undefined> {
  try {
    return await (fromCache ? res.getFromCache(namespace, name, 'high') : res.get(namespace, name, 'high'));
  } catch (err) {
    if (err instanceof ApiError && err.notFound) return undefined;
    throw err;
  }
}

/** Every webhook path kruise-ts serves, mapped to upstream's rules (api/). */
export function admissionHandlers(rest: RestClient, namespace: string, now: () => Date = () => new Date()): Map<string, AdmissionHandler> {
  const pods = new Resource<Pod & KubeObject>(rest, core.pods);
  const nodes = new Resource<Node & KubeObject>(rest, core.nodes);
  const h = new Map<string, AdmissionHandler>();
  const op = (req: AdmissionRequest): 'create' | 'update' => (req.operation === 'UPDATE' ? 'update' : 'create');

  h.set(WEBHOOK_PATHS.mutateNodeImage, async (req) => {
    const ni = shaped<NodeImage>(req, 'NodeImage');
    return isResult(ni) ? ni : admit(defaultNodeImage(ni, now()));
  });
  h.set(WEBHOOK_PATHS.validateNodeImage, async (req) => {
    const ni = shaped<NodeImage>(req, 'NodeImage');
    return isResult(ni) ? ni : validated(ni, validateNodeImage(ni));
  });
  h.set(WEBHOOK_PATHS.mutateImagePullJob, async (req) => {
    const job = shaped<ImagePullJob>(req, 'ImagePullJob');
    return isResult(job) ? job : admit(defaultImagePullJob(job, op(req)));
  });
  h.set(WEBHOOK_PATHS.validateImagePullJob, async (req) => {
    const job = shaped<ImagePullJob>(req, 'ImagePullJob');
    if (isResult(job)) return job;
    return validated(job, validateImagePullJob(job, old<ImagePullJob>(req)));
  });
  h.set(WEBHOOK_PATHS.mutateImageListPullJob, async (req) => {
    const job = shaped<ImageListPullJob>(req, 'ImageListPullJob');
    return isResult(job) ? job : admit(defaultImageListPullJob(job));
  });
  h.set(WEBHOOK_PATHS.validateImageListPullJob, async (req) => {
    const job = shaped<ImageListPullJob>(req, 'ImageListPullJob');
    return isResult(job) ? job : validated(job, validateImageListPullJob(job));
  });
  h.set(WEBHOOK_PATHS.mutateCrr, async (req) => {
    const crr = shaped<ContainerRecreateRequest>(req, 'ContainerRecreateRequest');
    if (isResult(crr)) return crr;
    if (req.operation === 'UPDATE') {
      const previous = old<ContainerRecreateRequest>(req);
      if (!previous) return reject(400, ['the update request carries no old object']);
      return admitContainerRecreateRequestUpdate(crr, previous);
    }
    const namespace = req.namespace ?? crr.metadata?.namespace;
    const podName = crr.spec?.podName;
    const metadata = { ...crr.metadata };
    if (namespace !== undefined) metadata.namespace = namespace;
    const decide = async (fromCache: boolean): Promise<AdmissionResult<ContainerRecreateRequest>> => {
      const pod = typeof podName === 'string' && podName !== '' ? await getOrUndefined(pods, namespace, podName, fromCache) : undefined;
      const nodeName = pod?.spec?.nodeName;
      const node = nodeName ? await getOrUndefined(nodes, undefined, nodeName, fromCache) : undefined;
      return admitContainerRecreateRequestCreate({ ...crr, metadata }, pod, node);
    };
    // The pod and its node come from the API server's watch cache, as upstream's webhook reads them
    // from its informer: a burst of CRRs on a busy control plane then costs no etcd reads (quorum
    // reads of the pod took 3.4 s in the CRR benchmark and a create timed out on the webhook). A
    // cache a moment behind refuses nothing: a refusal is decided again on reads from etcd.
    const fast = await decide(true);
    return fast.allowed ? fast : decide(false);
  });
  h.set(WEBHOOK_PATHS.validateDaemonOwnNode, ownNodeHandler(namespace, (ns, name) => getOrUndefined(pods, ns, name)));
  return h;
}
