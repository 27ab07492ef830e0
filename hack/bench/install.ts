// kruise-ts installed as users install it (hack/install-pods.ts: the image, `kubectl apply -k`):
// time from the apply to every pod Ready, the image's size, the pods' memory from their cgroups, the
// time a DaemonSet roll to a new tag takes over the cluster's nodes, and `kubectl delete -k`.
//   node dist/hack/bench/install.js ENV_JSON
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { DEFAULT_KRUISE_NAMESPACE } from '../../api/installation.js';
import { CriClient } from '../../daemon/cri/client.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { RestClient } from '../../kube/rest.js';
import { buildImage, DAEMONSET, installationReady, kubectl, podsDown, podsUp, type PodEnv } from '../install-pods.js';
import { workingSetBytes } from '../pod-memory.js';
import { eventuallyTrue } from '../wait.js';
import { rssMiB } from './proc.js';
import { fmt, record, summarize } from './stats.js';

const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as PodEnv;
const runs = Math.min(Number(process.env['BENCH_RUNS'] ?? 5), 3);
const MiB = 1048576;

/** The image as the registry serves it: compressed layers, and what they unpack to. */
async function imageSize(ref: string): Promise<{ compressed: number; unpacked: number }> {
  const [host, rest] = [ref.slice(0, ref.indexOf('/')), ref.slice(ref.indexOf('/') + 1)];
  const [repo, tag] = [rest.slice(0, rest.lastIndexOf(':')), rest.slice(rest.lastIndexOf(':') + 1)];
  const manifest = (await (await fetch(`http://${host}/v2/${repo}/manifests/${tag}`, { headers: { Accept: 'application/vnd.oci.image.manifest.v1+json' } })).json()) as { layers: Array<{ digest: string; size: number }> };
  let compressed = 0;
  let unpacked = 0;
  for (const l of manifest.layers) {
    compressed += l.size;
    unpacked += gunzipSync(Buffer.from(await (await fetch(`http://${host}/v2/${repo}/blobs/${l.digest}`)).arrayBuffer())).length;
  }
  return { compressed, unpacked };
}

/**
 * Memory of each kruise-ts container on every node, as the kubelet counts it: the memory cgroup's
 * working set (usage less inactive file pages), and the process's RSS, to set beside the
 * host-process figures.
 */
async function podMemory(): Promise<Map<string, Array<{ workingSet: number; rss: number }>>> {
  const out = new Map<string, Array<{ workingSet: number; rss: number }>>();
  for (const n of env.nodes) {
    const cri = new CriClient(n.criSocket);
    try {
      const { containers } = await cri.runtime('ListContainers', { filter: { label_selector: { 'io.kubernetes.pod.namespace': DEFAULT_KRUISE_NAMESPACE }, state: { state: 'CONTAINER_RUNNING' } } });
      for (const c of containers ?? []) {
        const { info } = await cri.runtime('ContainerStatus', { container_id: c.id, verbose: true });
        const pid = (JSON.parse(info?.['info'] ?? '{}') as { pid?: number }).pid ?? 0;
        const workingSet = workingSetBytes(pid);
        if (workingSet === undefined) throw new Error(`${n.name}: container ${c.metadata?.name ?? c.id} (pid ${pid}) has no memory cgroup to read`);
        const name = c.metadata?.name ?? '';
        out.set(name, [...(out.get(name) ?? []), { workingSet: workingSet / MiB, rss: rssMiB(pid) }]);
      }
    } finally {
      cri.close();
    }
  }
  return out;
}

const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
const ready: number[] = [];
const deleted: number[] = [];
let image = '';
for (let i = 0; i < runs; i++) {
  const up = await podsUp(env);
  image = up.image;
  ready.push(up.readySeconds * 1000);
  if (i === runs - 1) break;
  const t0 = performance.now();
  podsDown(env);
  deleted.push(performance.now() - t0);
}
// Idle: caches synced, leader elected, nothing to do.
await new Promise((r) => setTimeout(r, 15_000));
const memory = await podMemory();
const size = await imageSize(image);

const next = buildImage(env, 'bench-roll');
const t0 = performance.now();
kubectl(env, ['-n', DEFAULT_KRUISE_NAMESPACE, 'set', 'image', `daemonset/${DAEMONSET}`, `daemon=${next}`]);
const rolled = await eventuallyTrue(async () => {
  const pods = kubectl(env, ['-n', DEFAULT_KRUISE_NAMESPACE, 'get', 'pods', '-l', `app.kubernetes.io/name=${DAEMONSET}`, '-o', 'jsonpath={.items[*].spec.containers[0].image}']).split(' ');
  return pods.length === env.nodes.length && pods.every((p) => p === next) && (await installationReady(rest, env.nodes.length));
}, 300_000, 250);
const rollMs = performance.now() - t0;
const t1 = performance.now();
podsDown(env);
deleted.push(performance.now() - t1);
await rest.close();
if (!rolled) throw new Error(`the DaemonSet did not roll to ${next} within 300 s`);

record('install readyMs', summarize(ready).median);
console.log('## Installed as pods: `kubectl apply -k` on the local cluster\n');
console.log(
  `kruise-ts's image (hack/build-image.sh) installed with \`kubectl apply -k\` (deploy/overlays/local) on the local cluster's ${env.nodes.length} kubelet nodes: the manager Deployment (2 replicas) and the daemon DaemonSet, each Ready through its own probes. Memory is read from each container's memory cgroup after 15 s idle (working set: usage less inactive file pages, as the kubelet counts it) beside the process's RSS (pages of the Node.js binary, shared by every container started from the image, are charged to the cgroup that read them first, so a working set can sit well below its RSS); compare the RSS with the host-process figures of "Start-up and footprint" above, measured in this same run.\n`,
);
console.log('| figure | value |\n| --- | --- |');
console.log(`| \`kubectl apply -k\` → every pod Ready | ${fmt(summarize(ready))} |`);
console.log(`| \`kubectl delete -k\` → everything gone | ${fmt(summarize(deleted))} |`);
console.log(`| image size | ${(size.compressed / MiB).toFixed(1)} MiB compressed, ${(size.unpacked / MiB).toFixed(1)} MiB unpacked |`);
for (const [name, xs] of [...memory.entries()].sort()) {
  console.log(`| ${name} pod memory (cgroup working set) | ${fmt(summarize(xs.map((x) => x.workingSet)), 'MiB')} |`);
  console.log(`| ${name} pod RSS | ${fmt(summarize(xs.map((x) => x.rss)), 'MiB')} |`);
  record(`pod ${name} workingSetMiB`, summarize(xs.map((x) => x.workingSet)).median);
}
console.log(`| DaemonSet roll to a new tag over ${env.nodes.length} nodes (set image → every daemon updated and Ready) | ${(rollMs / 1000).toFixed(1)} s |`);
console.log();
