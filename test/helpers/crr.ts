import type { V1ContainerStatus, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { Wire } from '../../api/types/common.js';
import type { Container, Pod } from '../../api/types/core.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CONDITION_KRUISE_POD_READY } from '../../api/metadata-keys.js';
import type { ContainerRecreateRequest, ContainerRecreateRequestStrategy } from '../../api/types/containerrecreaterequest.js';
import type { RestClient } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, PATCH_JSON, Resource } from '../../kube/resource.js';
import { clusterEnv, eventually, kruise } from './kube.js';


export interface KubeEventObject extends KubeObject {
  reason?: string;
  message?: string;
  type?: string;
  involvedObject?: { name?: string; fieldPath?: string; uid?: string };
  source?: { component?: string; host?: string };
}

export function resources(rest: RestClient): { pods: Resource<Pod>; crrs: Resource<ContainerRecreateRequest>; events: Resource<KubeEventObject> } {
  return { pods: new Resource<Pod>(rest, core.pods), crrs: new Resource<ContainerRecreateRequest>(rest, kruise.crrs), events: new Resource<KubeEventObject>(rest, core.events) };
}

/** A shell as PID 1 that logs TERM into `log` (when given) and exits 0 on it. */
export function termHandling(log?: string, before = ''): string[] {
  const onTerm = log ? `echo term >> ${log}; exit 0` : 'exit 0';
  return ['sh', '-c', `${before}trap '${onTerm}' TERM; while true; do sleep 1; done`];
}

/** sleep as PID 1 ignores TERM: only the SIGKILL after the grace period ends it. */
export const ignoresTerm = ['sleep', 'infinity'];

export interface PodOptions {
  grace?: number;
  gate?: boolean;
  hostDir?: string;
}

export function container(name: string, command: string[], over: Partial<Container> = {}): Container {
  return { name, image: `${clusterEnv().registryOpen}/busybox:1.0`, imagePullPolicy: 'IfNotPresent', command, ...over };
}

export function podSpec(namespace: string, name: string, node: string, containers: Container[], o: PodOptions = {}): Pod {
  const volumes: Array<Wire<V1Volume>> = o.hostDir ? [{ name: 'hook', hostPath: { path: o.hostDir, type: 'DirectoryOrCreate' } }] : [];
  const mounts: Array<Wire<V1VolumeMount>> = o.hostDir ? [{ name: 'hook', mountPath: '/hook' }] : [];
  return {
    metadata: { name, namespace },
    spec: {
      nodeName: node,
      hostNetwork: true,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: o.grace ?? 2,
      ...(o.gate ? { readinessGates: [{ conditionType: CONDITION_KRUISE_POD_READY }] } : {}),
      ...(volumes.length > 0 ? { volumes } : {}),
      containers: containers.map((c) => ({ ...c, ...(mounts.length > 0 ? { volumeMounts: mounts } : {}) })),
    },
  };
}

/**
 * TCP ports something listens on in this network namespace, which host-network pods share: a
 * container counts as running once its shell started, before the server it starts listens.
 */
export function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      // 0A: TCP_LISTEN.
      if (state === '0A' && local !== undefined) ports.add(Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16));
    }
  }
  return ports;
}

export function statusOf(pod: Pod, name: string): Wire<V1ContainerStatus> {
  const s = pod.status?.containerStatuses?.find((c) => c.name === name);
  if (!s) throw new Error(`no status for container ${name}`);
  return s;
}

/** Waits until every container runs, is ready and has an ID (and, with a gate, sets it True). */
export async function runningPod(pods: Resource<Pod>, namespace: string, name: string, timeoutMs = 60_000): Promise<Pod> {
  return eventually(async () => {
    const p = await pods.get(namespace, name);
    const all = p.spec?.containers.map((c) => c.name) ?? [];
    for (const c of all) {
      const s = p.status?.containerStatuses?.find((x) => x.name === c);
      if (!s?.state?.running || !s.ready || !s.containerID) throw new Error(`pod ${name}: ${c} not running yet: ${JSON.stringify(s?.state)}`);
    }
    return p;
  }, timeoutMs, 200);
}

/**
 * Sets the pod's KruisePodReady condition True, as OpenKruise's pod-readiness webhook does for pods
 * carrying the gate, and waits for the pod to be Ready.
 */
export async function markKruisePodReady(pods: Resource<Pod>, namespace: string, name: string): Promise<void> {
  const p = await pods.get(namespace, name);
  const conditions = p.status?.conditions ?? [];
  const i = conditions.findIndex((c) => c.type === CONDITION_KRUISE_POD_READY);
  const cond = { type: CONDITION_KRUISE_POD_READY, status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
  const ops = i >= 0 ? [{ op: 'replace', path: `/status/conditions/${i}`, value: cond }] : [{ op: 'add', path: '/status/conditions/-', value: cond }];
  await pods.patchStatus(namespace, name, ops, PATCH_JSON);
}

export function readyOf(pod: Pod): string | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready')?.status;
}

export function crrSpec(namespace: string, name: string, podName: string, containers: string[], strategy: ContainerRecreateRequestStrategy = {}, extra: Partial<ContainerRecreateRequest['spec']> = {}): ContainerRecreateRequest {
  return { metadata: { name, namespace }, spec: { podName, containers: containers.map((c) => ({ name: c })), strategy, ...extra } };
}

export async function completedCrr(crrs: Resource<ContainerRecreateRequest>, namespace: string, name: string, timeoutMs = 60_000): Promise<ContainerRecreateRequest> {
  return eventually(async () => {
    const c = await crrs.get(namespace, name);
    if (c.status?.phase !== 'Completed') throw new Error(`CRR ${name} not completed: ${JSON.stringify(c.status)}`);
    return c;
  }, timeoutMs, 200);
}

export async function podEvents(events: Resource<KubeEventObject>, namespace: string, pod: string, reason: string): Promise<KubeEventObject[]> {
  const list = await events.list(namespace, { fieldSelector: `involvedObject.name=${pod},reason=${reason}` });
  return list.items;
}

/**
 * Pushes `busybox:<tag>` to the open registry: busybox's layers under an image config that declares
 * an unknown STOPSIGNAL. containerd then refuses every graceful StopContainer of such a container
 * ("failed to parse stop signal"), which is how a real runtime fails a stop.
 */
export async function pushBadStopSignalImage(tag: string): Promise<string> {
  const reg = `http://${clusterEnv().registryOpen}`;
  const accept = 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';
  const res = await fetch(`${reg}/v2/busybox/manifests/1.0`, { headers: { Accept: accept } });
  const mediaType = res.headers.get('content-type') ?? 'application/vnd.oci.image.manifest.v1+json';
  const manifest = (await res.json()) as { config: { digest: string; size: number } };
  const config = (await (await fetch(`${reg}/v2/busybox/blobs/${manifest.config.digest}`)).json()) as { config?: Record<string, unknown> };
  config.config = { ...config.config, StopSignal: 'SIGBOGUS' };
  const body = Buffer.from(JSON.stringify(config));
  const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
  const upload = await fetch(`${reg}/v2/busybox/blobs/uploads/`, { method: 'POST' });
  const location = new URL(upload.headers.get('location') ?? '', reg);
  location.searchParams.set('digest', digest);
  const put = await fetch(location, { method: 'PUT', body, headers: { 'Content-Type': 'application/octet-stream' } });
  if (!put.ok) throw new Error(`config upload: HTTP ${put.status}`);
  manifest.config = { ...manifest.config, digest, size: body.length };
  const m = await fetch(`${reg}/v2/busybox/manifests/${tag}`, { method: 'PUT', body: JSON.stringify(manifest), headers: { 'Content-Type': mediaType } });
  if (!m.ok) throw new Error(`manifest upload: HTTP ${m.status} ${await m.text()}`);
  return `${clusterEnv().registryOpen}/busybox:${tag}`;
}
