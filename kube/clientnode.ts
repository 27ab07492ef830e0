import type https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import type { ClusterAccess } from './access.js';
import { configSource, KubeConfigError } from './kubeconfig.js';

/**
 * A kubeconfig through client-node, so every authentication kubectl supports works for the manager
 * out of cluster too (loaded only for those: loadManagerClusterAccess); the daemon's precedence
 * (configSource).
 */
export function loadKubeConfig(explicitPath: string): KubeConfig {
  const source = configSource(explicitPath);
  const kc = new KubeConfig();
  try {
    if (source.kind === 'file') kc.loadFromFile(source.path);
    else kc.loadFromCluster();
  } catch (err) {
    throw new KubeConfigError(`cannot load kubeconfig: ${(err as Error).message}`, { cause: err });
  }
  if (!kc.getCurrentCluster()) throw new KubeConfigError('the kubeconfig has no current cluster (check current-context)');
  return kc;
}

/** Access from a client-node KubeConfig: every authentication kubectl knows (exec plugins, OIDC, ...). */
export async function accessFromKubeConfig(kc: KubeConfig): Promise<ClusterAccess> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const probe: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(probe);
  return {
    server: cluster.server,
    ca: probe.ca as Buffer | string | undefined,
    cert: probe.cert as Buffer | string | undefined,
    key: probe.key as Buffer | string | undefined,
    insecureSkipTlsVerify: probe.rejectUnauthorized === false,
    headers: async () => {
      const o: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(o);
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(o.headers ?? {})) if (typeof v === 'string') h[k] = v;
      if (o.auth) h['Authorization'] = `Basic ${Buffer.from(o.auth).toString('base64')}`;
      return h;
    },
  };
}
