// "A daemon writes only its own node's objects": the rule of deploy/policy's ValidatingAdmissionPolicy
// (Kubernetes >= 1.30), decided here for kruise-manager's validating webhook so clusters before 1.30
// get it too. RBAC cannot say "my node"; the node comes from the caller's bound service-account token.
// Pure: the webhook (manager/webhook/ownnode.ts) reads the node of the pod callerNode names.

import { LABEL_CRR_NODE_NAME } from './metadata-keys.js';

/** What the API server tells an admission webhook about the caller. */
export interface AdmissionUser {
  username?: string;
  extra?: Record<string, string[]>;
}

/** Claims the API server puts into userInfo.extra for a token bound to a pod (node-name from 1.30). */
export const CLAIM_POD_NAME = 'authentication.kubernetes.io/pod-name';
export const CLAIM_POD_UID = 'authentication.kubernetes.io/pod-uid';
export const CLAIM_NODE_NAME = 'authentication.kubernetes.io/node-name';

export const DAEMON_SERVICE_ACCOUNT = 'kruise-ts-daemon';

export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** Where the caller's node can be read: the claim itself, or the pod its token is bound to. */
export type CallerNode = { node: string } | { pod: { namespace: string; name: string; uid: string } } | { unbound: true };

export function callerNode(user: AdmissionUser, namespace: string): CallerNode {
  const first = (key: string): string => user.extra?.[key]?.[0] ?? '';
  const node = first(CLAIM_NODE_NAME);
  if (node !== '') return { node };
  const name = first(CLAIM_POD_NAME);
  const uid = first(CLAIM_POD_UID);
  return name !== '' && uid !== '' ? { pod: { namespace, name, uid } } : { unbound: true };
}

export const MESSAGE_DAEMON_TOKEN_UNBOUND =
  'kruise-daemon must use a service-account token bound to its pod (a projected serviceAccountToken volume; deploy/base/daemon.yaml mounts one): without it the API server cannot tell which node it runs on';

/** The write being admitted, as the review states it. */
export interface OwnNodeWrite {
  resource: string;
  subResource?: string;
  operation: string;
  name: string;
  /** The object's labels before the write (a CRR's node label). */
  oldLabels?: Record<string, string>;
}

/**
 * Why the daemon on `node` may not make `write`, or undefined when it may: only status updates,
 * only of its node's NodeImage and of CRRs labelled with its node.
 */
export function ownNodeRefusal(write: OwnNodeWrite, node: string): string | undefined {
  if (write.subResource !== 'status' || write.operation !== 'UPDATE') return 'kruise-daemon may only update status';
  if (write.resource === 'nodeimages' && write.name !== node) return `kruise-daemon on ${node} may not write the NodeImage of ${write.name}`;
  if (write.resource === 'containerrecreaterequests' && write.oldLabels?.[LABEL_CRR_NODE_NAME] !== node) {
    return `kruise-daemon on ${node} may not write ContainerRecreateRequest ${write.name} of node ${write.oldLabels?.[LABEL_CRR_NODE_NAME] ?? '(none)'}`;
  }
  return undefined;
}
