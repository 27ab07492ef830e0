import { defaultServiceAccount } from '../../hack/wait.js';
import { kruiseApiFor, type KruiseApi, type KruiseVersions } from '../../kube/kruise.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { RestClient, type RestClientOptions } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { testEnv } from './env.js';
import { FaultProxy } from '../proxy/fault-proxy.js';

export interface ClusterEnv {
  envName: string;
  kubeconfig: string;
  restrictedKubeconfig: string;
  apiServer: string;
  /** kubectl built with the local cluster's binaries (hack/build-kube.sh). */
  kubectl: string;
  /** The API server's audit log of kruise-ts's ServiceAccounts' requests (hack/lib/cluster.sh). */
  auditLog: string;
  nodes: Array<{ name: string; criSocket: string; containerdDir: string }>;
}

export function clusterEnv(): ClusterEnv & ReturnType<typeof testEnv> {
  return testEnv() as ClusterEnv & ReturnType<typeof testEnv>;
}

/**
 * The OpenKruise kinds in the versions the test cluster serves: global setup installs deploy/crds or,
 * with KRUISE_TS_CRDS=openkruise-v1.9, CRDs shaped like OpenKruise v1.9's, and records what is served.
 */
export const kruise: KruiseApi = kruiseApiFor(JSON.parse(process.env['KRUISE_TS_KRUISE_VERSIONS'] ?? '{"nodeImages":"v1beta1","imagePullJobs":"v1beta1","imageListPullJobs":"v1beta1","crrs":"v1beta1"}') as KruiseVersions);

export function restClient(server?: string, opts: RestClientOptions = {}): RestClient {
  const access = loadClusterAccess(clusterEnv().kubeconfig);
  return new RestClient(server ? { ...access, server } : access, { qps: 0, ...opts });
}

/** A fresh namespace named after the environment (the teardown cleans its pod logs by that prefix). */
export async function createNamespace(rest: RestClient, label: string, serviceAccountTimeoutMs?: number): Promise<string> {
  const name = `${clusterEnv().envName}-${label}-${Math.random().toString(36).slice(2, 7)}`;
  await new Resource<KubeObject>(rest, core.namespaces).create({ metadata: { name } });
  await defaultServiceAccount(rest, name, serviceAccountTimeoutMs);
  return name;
}

export async function deleteNamespace(rest: RestClient, name: string): Promise<void> {
  await new Resource<KubeObject>(rest, core.namespaces).delete(undefined, name).catch(() => undefined);
}

/** Polls `fn` until it stops throwing, or throws its last error after `timeoutMs`. */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}

/** A fault-injecting proxy in front of the real API server (see test/proxy). */
export async function startProxy(): Promise<FaultProxy> {
  const env = clusterEnv();
  const pki = `${env.envDir}/kube/pki`;
  return FaultProxy.start({ upstream: env.apiServer, certFile: `${pki}/apiserver.crt`, keyFile: `${pki}/apiserver.key`, caFile: `${pki}/ca.crt` });
}
