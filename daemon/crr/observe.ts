// What the runtime shows of a pod: the newest instance of each container, and the pod's address.
// The daemon never reads pods from the API server for CRRs; the kubelet's CRI labels say it all.
import type { CriClient } from '../cri/client.js';
import type { ObservedContainer } from './step.js';

const LABEL_POD_UID = 'io.kubernetes.pod.uid';
const LABEL_CONTAINER_NAME = 'io.kubernetes.container.name';
const CALL_TIMEOUT_MS = 10_000;

/**
 * The newest instance (highest attempt, then latest created) of each container of the pod.
 * `originals` maps container names to the instance the CRR was created against. With `startTimes`
 * (a CRR with minStartedSeconds, the only reader) the start time of running instances other than
 * those is read too: one ContainerStatus each, which ListContainers does not answer.
 */
export async function observeContainers(
  cri: CriClient,
  podUid: string,
  originals: ReadonlyMap<string, string>,
  { startTimes = false, signal }: { startTimes?: boolean; signal?: AbortSignal } = {},
): Promise<Map<string, ObservedContainer>> {
  const opts = { timeoutMs: CALL_TIMEOUT_MS, signal };
  const res = await cri.runtime('ListContainers', { filter: { label_selector: { [LABEL_POD_UID]: podUid } } }, opts);
  const newest = new Map<string, { id: string; attempt: number; created: bigint; running: boolean }>();
  for (const c of res.containers) {
    const name = c.labels[LABEL_CONTAINER_NAME] ?? c.metadata?.name;
    if (name === undefined || !originals.has(name)) continue;
    const cand = { id: c.id, attempt: c.metadata?.attempt ?? 0, created: BigInt(c.created_at || '0'), running: c.state === 'CONTAINER_RUNNING' };
    const cur = newest.get(name);
    if (cur === undefined || cand.attempt > cur.attempt || (cand.attempt === cur.attempt && cand.created > cur.created)) newest.set(name, cand);
  }
  const out = new Map<string, ObservedContainer>();
  await Promise.all(
    [...newest].map(async ([name, c]) => {
      const o: ObservedContainer = { id: c.id, running: c.running, attempt: c.attempt };
      if (startTimes && c.running && originals.get(name) !== c.id) {
        const st = await cri.runtime('ContainerStatus', { container_id: c.id, verbose: false }, opts);
        const startedNs = BigInt(st.status?.started_at || '0');
        if (startedNs > 0n) o.startedAtMs = Number(startedNs / 1_000_000n);
      }
      out.set(name, o);
    }),
  );
  return out;
}

/**
 * Where the kubelet would send an httpGet hook without a host: the sandbox's IP, or for pods on
 * the host's network (the runtime reports no IP for them) the node itself.
 */
export async function podAddress(cri: CriClient, podUid: string, signal?: AbortSignal): Promise<string> {
  const opts = { timeoutMs: CALL_TIMEOUT_MS, signal };
  const res = await cri.runtime('ListPodSandbox', { filter: { label_selector: { [LABEL_POD_UID]: podUid }, state: { state: 'SANDBOX_READY' } } }, opts);
  const sandbox = res.items[0];
  if (sandbox === undefined) return '127.0.0.1';
  const st = await cri.runtime('PodSandboxStatus', { pod_sandbox_id: sandbox.id, verbose: false }, opts);
  const ip = st.status?.network?.ip ?? '';
  return ip !== '' ? ip : '127.0.0.1';
}
