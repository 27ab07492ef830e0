// Points the ContainerRecreateRequest CRD's conversion webhook at this manager with its CA, as
// upstream's manager does for the CRDs it converts (pkg/webhook/util/crd/crd.go): only when the CRD
// asks for webhook conversion (deploy/crds does; OpenKruise v1.9's CRD serves v1alpha1 alone and
// needs none), and never the strategy itself.
import { CONTAINER_RECREATE_REQUEST_RESOURCE } from '../../api/group-version.js';
import type { KubeObject } from '../../api/types/common.js';
import { covers } from '../../kube/covers.js';
import { core, Resource } from '../../kube/resource.js';
import type { RestClient } from '../../kube/rest.js';
import { updateWithRetry } from '../../kube/write.js';
import type { WebhookTarget } from './configurations.js';
import { CONVERSION_PATH } from './server.js';

interface ClientConfig {
  caBundle?: string;
  url?: string;
  service?: { namespace: string; name: string; port: number; path: string };
}

interface Crd extends KubeObject {
  spec: { conversion?: { strategy?: string; webhook?: { clientConfig?: ClientConfig; conversionReviewVersions?: string[] } } };
}

/** Whether the CRD now converts through this manager ('none' when it asks for no webhook). */
export async function injectCrrConversion(rest: RestClient, target: WebhookTarget, caPem: string): Promise<'configured' | 'none' | 'no-crd'> {
  const crds = new Resource<Crd>(rest, core.crds);
  const clientConfig: ClientConfig = {
    caBundle: Buffer.from(caPem).toString('base64'),
    ...('url' in target ? { url: `${target.url.replace(/\/$/, '')}${CONVERSION_PATH}` } : { service: { ...target.service, path: CONVERSION_PATH } }),
  };
  let outcome: 'configured' | 'none' | 'no-crd' = 'no-crd';
  await updateWithRetry(crds, undefined, CONTAINER_RECREATE_REQUEST_RESOURCE.crdName, (crd) => {
    const conversion = crd.spec.conversion;
    if (conversion?.strategy !== 'Webhook') {
      outcome = 'none';
      return undefined;
    }
    outcome = 'configured';
    if (covers(conversion.webhook?.clientConfig, clientConfig)) return undefined;
    return { ...crd, spec: { ...crd.spec, conversion: { ...conversion, webhook: { conversionReviewVersions: ['v1'], ...conversion.webhook, clientConfig } } } };
  });
  return outcome;
}
