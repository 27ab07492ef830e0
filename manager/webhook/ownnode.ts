import { admit, reject, type AdmissionResult } from '../../api/admission.js';
import { callerNode, DAEMON_SERVICE_ACCOUNT, MESSAGE_DAEMON_TOKEN_UNBOUND, ownNodeRefusal, serviceAccountUser } from '../../api/daemon-own-node.js';
import type { KubeObject } from '../../api/types/common.js';
import type { Pod } from '../../api/types/core.js';
import type { AdmissionRequest } from './server.js';

/** Pods never move: a daemon pod's node is read once per pod (its uid), for this many pods at most. */
const MAX_CACHED_PODS = 10_000;

/**
 * The webhook side of "a daemon writes only its own node's objects" for clusters before 1.30
 * (deploy/policy's ValidatingAdmissionPolicy does the same in the API server from 1.30): status
 * updates of NodeImages and CRRs by the daemon's ServiceAccount are checked against the node of the
 * pod its token is bound to; every other caller passes.
 */
export function ownNodeHandler(namespace: string, getPod: (namespace: string, name: string) => Promise<Pod | undefined>): (req: AdmissionRequest) => Promise<AdmissionResult<unknown>> {
  const daemon = serviceAccountUser(namespace, DAEMON_SERVICE_ACCOUNT);
  const nodeOfPod = new Map<string, string>();

  async function podNode(pod: { namespace: string; name: string; uid: string }): Promise<string | undefined> {
    const known = nodeOfPod.get(pod.uid);
    if (known !== undefined) return known;
    const found = await getPod(pod.namespace, pod.name);
    const node = found?.spec?.nodeName;
    if (found?.metadata?.uid !== pod.uid || !node) return undefined;
    if (nodeOfPod.size >= MAX_CACHED_PODS) nodeOfPod.delete(nodeOfPod.keys().next().value ?? '');
    nodeOfPod.set(pod.uid, node);
    return node;
  }

  return async (req) => {
    if (req.userInfo?.username !== daemon) return admit(req.object);
    const caller = callerNode(req.userInfo, namespace);
    if ('unbound' in caller) return reject(403, [MESSAGE_DAEMON_TOKEN_UNBOUND]);
    const node = 'node' in caller ? caller.node : await podNode(caller.pod);
    if (node === undefined) return reject(403, [`the pod kruise-daemon's token is bound to (${'pod' in caller ? caller.pod.name : ''}) is gone or not on a node`]);
    const oldMeta = typeof req.oldObject === 'object' && req.oldObject !== null ? (req.oldObject as KubeObject).metadata : undefined;
    const refusal = ownNodeRefusal(
      {
        resource: req.resource?.resource ?? '',
        ...(req.subResource !== undefined ? { subResource: req.subResource } : {}),
        operation: req.operation,
        name: req.name ?? '',
        ...(oldMeta?.labels ? { oldLabels: oldMeta.labels } : {}),
      },
      node,
    );
    return refusal === undefined ? admit(req.object) : reject(403, [refusal]);
  };
}
