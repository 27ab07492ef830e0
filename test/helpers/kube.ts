import { KubeConfig } from '@kubernetes/client-node';
import { RestClient, type RestClientOptions } from '../../kube/rest.js';
import { core, Resource, type KubeObject } from '../../kube/resource.js';
import { testEnv } from './env.js';
import { FaultProxy } from '../proxy/fault-proxy.js';

export interface ClusterEnv {
  envName: string;
  kubeconfig: string;
  restrictedKubeconfig: string;
  apiServer: string;
  nodes: Array<{ name: string; criSocket: string; containerdDir: string }>;
}

export function clusterEnv(): ClusterEnv & ReturnType<typeof testEnv> {
  return testEnv() as ClusterEnv & ReturnType<typeof testEnv>;
}

/** The admin kubeconfig, optionally pointed at another server (a fault proxy). */
export function kubeConfig(server?: string, file = clusterEnv().kubeconfig): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  if (server) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig without cluster');
    kc.loadFromOptions({
      clusters: kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server } : c)),
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
  }
  return kc;
}

export function restClient(server?: string, opts: RestClientOptions = {}): RestClient {
  return new RestClient(kubeConfig(server), { qps: 0, ...opts });
}

/** A fresh namespace named after the environment (the teardown cleans its pod logs by that prefix). */
export async function createNamespace(rest: RestClient, label: string): Promise<string> {
  const name = `${clusterEnv().envName}-${label}-${Math.random().toString(36).slice(2, 7)}`;
  await new Resource<KubeObject>(rest, core.namespaces).create({ metadata: { name } });
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
