import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

export class KubeConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubeConfigError';
  }
}

/**
 * Loads client configuration the way kubectl and controller-runtime do: an explicit --kubeconfig,
 * then $KUBECONFIG, then the in-cluster service account, then ~/.kube/config.
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
      throw new KubeConfigError(
        'no Kubernetes configuration: pass --kubeconfig PATH, set KUBECONFIG, or run in a pod with a service account',
      );
    }
  } catch (err) {
    if (err instanceof KubeConfigError) throw err;
    throw new KubeConfigError(`cannot load kubeconfig: ${(err as Error).message}`, { cause: err });
  }
  if (!kc.getCurrentCluster()) throw new KubeConfigError('the kubeconfig has no current cluster (check current-context)');
  return kc;
}
