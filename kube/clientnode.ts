import { existsSync } from 'node:fs';
import type https from 'node:https';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { ClusterAccess } from './access.js';
import { KubeConfigError } from './kubeconfig.js';

/**
 * The manager's kubeconfig through client-node, so every authentication kubectl supports works
 * out of cluster too; same precedence as the daemon's: --kubeconfig, $KUBECONFIG, in-cluster,
 * ~/.kube/config.
 */
export function loadKubeConfig(explicitPath: string, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (explicitPath !== '') {
      if (!existsSync(explicitPath)) throw new KubeConfigError(`--kubeconfig ${explicitPath} does not exist`);
      kc.loadFromFile(explicitPath);
    } else if (env['KUBECONFIG']) {
      const first = env['KUBECONFIG'].split(':').find((p) => p !== '');
      if (!first || !existsSync(first)) throw new KubeConfigError(`KUBECONFIG=${env['KUBECONFIG']} names no existing file`);
      kc.loadFromFile(first);
    } else if (env['KUBERNETES_SERVICE_HOST'] && existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token')) {
      kc.loadFromCluster();
    } else if (existsSync(join(homedir(), '.kube', 'config'))) {
      kc.loadFromFile(join(homedir(), '.kube', 'config'));
    } else {
      throw new KubeConfigError('no Kubernetes configuration: pass --kubeconfig PATH, set KUBECONFIG, or run in a pod with a service account');
    }
  } catch (err) {
    if (err instanceof KubeConfigError) throw err;
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
    ...(probe.ca ? { ca: probe.ca as Buffer | string } : {}),
    ...(probe.cert ? { cert: probe.cert as Buffer | string } : {}),
    ...(probe.key ? { key: probe.key as Buffer | string } : {}),
    ...(probe.rejectUnauthorized === false ? { insecureSkipTlsVerify: true } : {}),
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
