import { GROUP, PLURAL_CONTAINER_RECREATE_REQUESTS, PLURAL_IMAGE_LIST_PULL_JOBS, PLURAL_IMAGE_PULL_JOBS, PLURAL_NODE_IMAGES, VERSION_V1ALPHA1, VERSION_V1BETA1 } from '../../api/group-version.js';
import { DEFAULT_KRUISE_NAMESPACE, DEFAULT_WEBHOOK_SERVICE, MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION, WEBHOOK_NAME_SUFFIX } from '../../api/installation.js';
import { covers } from '../../kube/covers.js';
import { ApiError } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import type { RestClient } from '../../kube/rest.js';


/** Where the API server sends reviews: the Service (in cluster) or a URL (manager outside it). */
export type WebhookTarget = { service: { namespace: string; name: string; port: number } } | { url: string };

/** Where each hook is served (upstream v1.9's paths); handlers.ts registers its handlers here. */
export const WEBHOOK_PATHS = {
  mutateCrr: '/mutate-apps-kruise-io-containerrecreaterequest',
  mutateNodeImage: '/mutate-apps-kruise-io-nodeimage',
  validateNodeImage: '/validate-apps-kruise-io-nodeimage',
  mutateImagePullJob: '/mutate-apps-kruise-io-imagepulljob',
  validateImagePullJob: '/validate-apps-kruise-io-imagepulljob',
  mutateImageListPullJob: '/mutate-apps-kruise-io-imagelistpulljob',
  validateImageListPullJob: '/validate-apps-kruise-io-imagelistpulljob',
  /** kruise-ts's own: daemons write only their node's status (ownnode.ts). */
  validateDaemonOwnNode: '/validate-kruise-ts-daemon-own-node',
} as const;

interface WebhookDef {
  name: string;
  path: string;
  /** The resources (with subresource) and operations the hook sees: default the plural's CREATE and UPDATE. */
  resources: readonly string[];
  operations?: readonly string[];
}

/** The hooks kruise-ts serves, on upstream v1.9's paths, for both versions (the objects' JSON is the same). */
const mutatingHooks: readonly WebhookDef[] = [
  { name: `mcontainerrecreaterequest.${WEBHOOK_NAME_SUFFIX}`, path: WEBHOOK_PATHS.mutateCrr, resources: [PLURAL_CONTAINER_RECREATE_REQUESTS] },
  { name: `mnodeimage.${WEBHOOK_NAME_SUFFIX}`, path: WEBHOOK_PATHS.mutateNodeImage, resources: [PLURAL_NODE_IMAGES] },
  { name: `mimagepulljob.${WEBHOOK_NAME_SUFFIX}`, path: WEBHOOK_PATHS.mutateImagePullJob, resources: [PLURAL_IMAGE_PULL_JOBS] },
  { name: `mimagelistpulljob.${WEBHOOK_NAME_SUFFIX}`, path: WEBHOOK_PATHS.mutateImageListPullJob, resources: [PLURAL_IMAGE_LIST_PULL_JOBS] },
];
const validatingHooks: readonly WebhookDef[] = [
  { name: `vnodeimage.${WEBHOOK_NAME_SUFFIX}`, path: WEBHOOK_PATHS.validateNodeImage, resources: [PLURAL_NODE_IMAGES] },
  { name: `vimagepulljob.${WEBHOOK_NAME_SUFFIX}`, path: WEBHOOK_PATHS.validateImagePullJob, resources: [PLURAL_IMAGE_PULL_JOBS] },
  { name: `vimagelistpulljob.${WEBHOOK_NAME_SUFFIX}`, path: WEBHOOK_PATHS.validateImageListPullJob, resources: [PLURAL_IMAGE_LIST_PULL_JOBS] },
];
/** Every status update of NodeImages and CRRs passes it: opt-in (--daemon-own-node-webhook), deploy/ turns it on. */
const ownNodeHook: WebhookDef = {
  name: `vdaemonownnode.${WEBHOOK_NAME_SUFFIX}`,
  path: WEBHOOK_PATHS.validateDaemonOwnNode,
  resources: [`${PLURAL_NODE_IMAGES}/status`, `${PLURAL_CONTAINER_RECREATE_REQUESTS}/status`],
  operations: ['UPDATE'],
};

export interface WebhookConfiguration extends KubeObject {
  webhooks?: Array<Record<string, unknown>>;
}

function hook(def: WebhookDef, target: WebhookTarget, caBundle: string | undefined): Record<string, unknown> {
  const ca = caBundle !== undefined ? { caBundle } : {};
  const clientConfig =
    'url' in target ? { url: `${target.url.replace(/\/$/, '')}${def.path}`, ...ca } : { service: { ...target.service, path: def.path }, ...ca };
  return {
    name: def.name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    timeoutSeconds: 10,
    clientConfig,
    rules: [{ apiGroups: [GROUP], apiVersions: [VERSION_V1ALPHA1, VERSION_V1BETA1], operations: [...(def.operations ?? ['CREATE', 'UPDATE'])], resources: [...def.resources], scope: '*' }],
  };
}

const inClusterTarget: WebhookTarget = { service: { namespace: DEFAULT_KRUISE_NAMESPACE, name: DEFAULT_WEBHOOK_SERVICE, port: 443 } };

/** The configurations deploy/ ships (its manager runs with --daemon-own-node-webhook): the in-cluster Service, no CA yet (the manager injects it). */
export function deployWebhookConfigurations(): { mutating: WebhookConfiguration; validating: WebhookConfiguration } {
  return webhookConfigurations(inClusterTarget, undefined, true);
}

function webhookConfigurations(target: WebhookTarget, caPem: string | undefined, ownNode: boolean): { mutating: WebhookConfiguration; validating: WebhookConfiguration } {
  const caBundle = caPem !== undefined ? Buffer.from(caPem).toString('base64') : undefined;
  const validating = ownNode ? [...validatingHooks, ownNodeHook] : validatingHooks;
  return {
    mutating: { metadata: { name: MUTATING_WEBHOOK_CONFIGURATION }, webhooks: mutatingHooks.map((d) => hook(d, target, caBundle)) },
    validating: { metadata: { name: VALIDATING_WEBHOOK_CONFIGURATION }, webhooks: validating.map((d) => hook(d, target, caBundle)) },
  };
}

async function upsert(res: Resource<WebhookConfiguration>, desired: WebhookConfiguration): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const cur = await res.get(undefined, desired.metadata?.name ?? '');
      if (covers(cur.webhooks, desired.webhooks)) return;
      await res.update({ ...cur, webhooks: desired.webhooks ?? [] });
      return;
    } catch (err) {
      if (err instanceof ApiError && err.notFound) {
        try {
          await res.create(desired);
          return;
        } catch (e) {
          if (!(e instanceof ApiError && e.alreadyExists)) throw e;
        }
      } else if (!(err instanceof ApiError && err.conflict)) throw err;
    }
  }
  throw new Error(`cannot update webhook configuration ${desired.metadata?.name}`);
}

/** Creates the webhook configurations or injects the CA and target into those deploy/ installed. */
export async function injectWebhookConfigurations(rest: RestClient, target: WebhookTarget, caPem: string, ownNode: boolean): Promise<void> {
  const { mutating, validating } = webhookConfigurations(target, caPem, ownNode);
  await upsert(new Resource<WebhookConfiguration>(rest, core.mutatingwebhookconfigurations), mutating);
  await upsert(new Resource<WebhookConfiguration>(rest, core.validatingwebhookconfigurations), validating);
}
