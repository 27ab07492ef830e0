// kruise-ts installed on the local cluster the way users install it: the image built here
// (hack/build-image.sh), deploy/overlays/local with this environment's image and runtime sockets in
// a kustomization written next to the environment, `kubectl apply -k`, then the manager Deployment
// and the daemon DaemonSet Ready through their own probes. `down` is `kubectl delete -k`.
//   node dist/hack/install-pods.js up ENV_JSON [TAG] | down ENV_JSON
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { dump } from 'js-yaml';
import { DEFAULT_KRUISE_NAMESPACE, DEFAULT_MANAGER_DEPLOYMENT } from '../api/installation.js';
import type { KubeObject } from '../api/types/common.js';
import { loadClusterAccess } from '../kube/kubeconfig.js';
import { RestClient } from '../kube/rest.js';
import { Resource } from '../kube/resource.js';
import { portOffset, type LocalEnv } from './kruise.js';
import { projectRoot } from './root.js';
import { eventuallyTrue } from './wait.js';

export interface PodEnv extends LocalEnv {
  envName: string;
  kubectl: string;
}

const root = projectRoot();
export const DAEMONSET = 'kruise-ts-daemon';

/** The kustomization of this environment's installation. */
export function installDir(env: PodEnv): string {
  return join(env.envDir, 'kruise-pods');
}

/** Builds the image and pushes it to this environment's registry; returns its reference. */
export function buildImage(env: PodEnv, tag?: string): string {
  const out = execFileSync('bash', [join(root, 'hack', 'build-image.sh'), ...(tag ? [tag] : [])], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, KRUISE_TS_ENV: env.envName, KRUISE_TS_PORT_OFFSET: String(portOffset(env)) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return out.trim().split('\n').pop() ?? '';
}

/** deploy/overlays/local with this environment's image and the host paths of its nodes' runtime sockets. */
export function writeKustomization(env: PodEnv, image: string): string {
  const dir = installDir(env);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    dump({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      // kubectl 1.20's kustomize takes relative bases only.
      bases: [relative(dir, join(root, 'deploy', 'overlays', 'local'))],
      patchesStrategicMerge: ['environment.yaml'],
    }),
  );
  const manager = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: DEFAULT_MANAGER_DEPLOYMENT, namespace: DEFAULT_KRUISE_NAMESPACE },
    spec: { template: { spec: { containers: [{ name: 'manager', image }] } } },
  };
  // Each node of the local cluster has its own containerd, in the environment's folder.
  const daemon = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: DAEMONSET, namespace: DEFAULT_KRUISE_NAMESPACE },
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: 'daemon',
              image,
              args: [
                '--host-root=/host',
                '--addr=$(POD_IP):10221',
                `--runtime-endpoint=unix://${env.envDir}/$(NODE_NAME)/ctrd/containerd.sock`,
                `--registry-config-path=${env.envDir}/$(NODE_NAME)/ctrd/certs.d`,
              ],
              // The registry configuration is a host path, read under --host-root.
              volumeMounts: [
                { name: 'environment', mountPath: env.envDir, readOnly: true },
                { name: 'environment', mountPath: `/host${env.envDir}`, readOnly: true },
              ],
            },
          ],
          volumes: [{ name: 'environment', hostPath: { path: env.envDir } }],
        },
      },
    },
  };
  writeFileSync(join(dir, 'environment.yaml'), `${dump(manager)}---\n${dump(daemon)}`);
  return dir;
}

export function kubectl(env: PodEnv, args: string[]): string {
  return execFileSync(env.kubectl, ['--kubeconfig', env.kubeconfig, ...args], { encoding: 'utf8' });
}

interface Workload extends KubeObject {
  spec?: { replicas?: number };
  status?: { availableReplicas?: number; updatedReplicas?: number; numberReady?: number; desiredNumberScheduled?: number; updatedNumberScheduled?: number; observedGeneration?: number };
}

/** Whether the manager has all its replicas and the daemon a Ready pod on every node, all up to date. */
export async function installationReady(rest: RestClient, nodes: number): Promise<boolean> {
  const apps = (plural: string, kind: string): Resource<Workload> => new Resource<Workload>(rest, { group: 'apps', version: 'v1', plural, kind, namespaced: true });
  const d = await apps('deployments', 'Deployment').get(DEFAULT_KRUISE_NAMESPACE, DEFAULT_MANAGER_DEPLOYMENT);
  const ds = await apps('daemonsets', 'DaemonSet').get(DEFAULT_KRUISE_NAMESPACE, DAEMONSET);
  const fresh = (w: Workload): boolean => (w.status?.observedGeneration ?? 0) >= (w.metadata?.generation ?? 0);
  return (
    fresh(d) &&
    fresh(ds) &&
    d.status?.availableReplicas === (d.spec?.replicas ?? 1) &&
    d.status?.updatedReplicas === (d.spec?.replicas ?? 1) &&
    ds.status?.desiredNumberScheduled === nodes &&
    ds.status.numberReady === nodes &&
    ds.status.updatedNumberScheduled === nodes
  );
}

/** Builds, applies and waits until every pod is Ready; returns the image and the seconds from apply to Ready. */
export async function podsUp(env: PodEnv, tag?: string): Promise<{ image: string; readySeconds: number }> {
  const image = buildImage(env, tag);
  const dir = writeKustomization(env, image);
  const t0 = Date.now();
  kubectl(env, ['apply', '-k', dir]);
  const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
  try {
    if (!(await eventuallyTrue(() => installationReady(rest, env.nodes.length), 240_000, 500))) {
      throw new Error(`kruise-ts's pods were not Ready within 240 s: ${kubectl(env, ['-n', DEFAULT_KRUISE_NAMESPACE, 'get', 'pods', '-o', 'wide'])}`);
    }
  } finally {
    await rest.close();
  }
  return { image, readySeconds: (Date.now() - t0) / 1000 };
}

/** `kubectl delete -k`: everything the installation created goes, the CRDs (and their objects) too. */
export function podsDown(env: PodEnv): void {
  kubectl(env, ['delete', '-k', installDir(env), '--ignore-not-found', '--wait=true', '--timeout=120s']);
}

if (process.argv[1]?.endsWith('install-pods.js')) {
  const [verb, envFile, tag] = process.argv.slice(2);
  const env = JSON.parse(readFileSync(envFile ?? '', 'utf8')) as PodEnv;
  if (verb === 'up') {
    const { image, readySeconds } = await podsUp(env, tag);
    console.log(`kruise-ts ${image} installed with kubectl apply -k ${installDir(env)}: every pod Ready after ${readySeconds.toFixed(1)} s`);
  } else if (verb === 'down') {
    podsDown(env);
  } else {
    console.error('usage: node dist/hack/install-pods.js up ENV_JSON [TAG] | down ENV_JSON');
    process.exitCode = 2;
  }
}
