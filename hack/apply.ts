// Applies rendered manifests through the project's REST client (no kubectl needed).
import { ApiError, type RestClient } from '../kube/rest.js';
import type { KubeObject } from '../api/types/common.js';
import { core, Resource, type ResourceType } from '../kube/resource.js';
import type { Rendered } from './kustomize.js';

const rbac = (plural: string, kind: string, namespaced: boolean): ResourceType => ({ group: 'rbac.authorization.k8s.io', version: 'v1', plural, kind, namespaced });

export const applicable: Record<string, ResourceType> = {
  Namespace: core.namespaces,
  ServiceAccount: core.serviceaccounts,
  Secret: core.secrets,
  ClusterRole: rbac('clusterroles', 'ClusterRole', false),
  ClusterRoleBinding: rbac('clusterrolebindings', 'ClusterRoleBinding', false),
  Role: rbac('roles', 'Role', true),
  RoleBinding: rbac('rolebindings', 'RoleBinding', true),
  MutatingWebhookConfiguration: core.mutatingwebhookconfigurations,
  ValidatingWebhookConfiguration: core.validatingwebhookconfigurations,
};

/**
 * Creates each object, or replaces it when it exists; objects a running system fills in (Secrets,
 * webhook configurations with their injected CA) are created but never replaced.
 */
export async function apply(rest: RestClient, objects: readonly Rendered[]): Promise<void> {
  for (const o of objects) {
    const type = applicable[o.kind ?? ''];
    if (!type) throw new Error(`cannot apply ${o.kind} ${o.metadata?.name}: not a kind hack/apply.ts knows`);
    const res = new Resource<KubeObject>(rest, type);
    try {
      await res.create(o);
    } catch (err) {
      if (!(err instanceof ApiError && err.alreadyExists)) throw err;
      if (o.kind === 'Secret' || o.kind?.endsWith('WebhookConfiguration') || o.kind === 'Namespace') continue;
      const cur = await res.get(o.metadata?.namespace, o.metadata?.name ?? '');
      await res.update({ ...o, metadata: { ...o.metadata, resourceVersion: cur.metadata?.resourceVersion ?? '' } });
    }
  }
}

/** A token for a ServiceAccount (TokenRequest API), as a pod of it would get. */
export async function serviceAccountToken(rest: RestClient, namespace: string, name: string, seconds = 86400, boundToPod?: { name: string; uid: string }): Promise<string> {
  const boundObjectRef = boundToPod ? { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', ...boundToPod } } : {};
  const res = await rest.request<{ status?: { token?: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: seconds, ...boundObjectRef } },
  });
  if (!res.status?.token) throw new Error(`no token issued for ${namespace}/${name}`);
  return res.status.token;
}
