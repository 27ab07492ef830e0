// Soak: kruise-ts installed on the local cluster (the manager and a daemon per node, from the build)
// while ImagePullJobs, ImageListPullJobs and ContainerRecreateRequests keep coming and going, for
// SOAK_MINUTES (30). Every minute: the RSS and open file descriptors of each process. At the end:
// the growth from minute 5 to the end (the goal: under 5 %) and every error line the processes
// logged (the goal: none). Prints a Markdown section.
//   node dist/hack/bench/soak.js ENV_JSON
import { readdirSync, readFileSync } from 'node:fs';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';
import type { KubeObject } from '../../api/types/common.js';
import type { ImageListPullJob } from '../../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import { kruise } from '../../kube/kruise.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { RestClient } from '../../kube/rest.js';
import { core, Resource } from '../../kube/resource.js';
import { down, up, type Installation, type LocalEnv } from '../kruise.js';
import { defaultServiceAccount } from '../wait.js';
import { rssMiB } from './proc.js';

type Pod = KubeObject & { spec?: unknown; status?: { containerStatuses?: Array<{ ready?: boolean }> } };

const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as LocalEnv & { registryOpen: string };
const minutes = Math.max(6, Number(process.env['SOAK_MINUTES'] ?? 30));
const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
const pods = new Resource<Pod>(rest, core.pods);
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
const lists = new Resource<ImageListPullJob>(rest, kruise.imageListPullJobs);
const crrs = new Resource<ContainerRecreateRequest>(rest, kruise.crrs);
const namespaces = new Resource<KubeObject>(rest, core.namespaces);
const ns = `soak-${Math.random().toString(36).slice(2, 7)}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const image = (i: number): string => `${env.registryOpen}/many-${String(1 + (i % 30)).padStart(3, '0')}:1.0`;

interface Sample {
  minute: number;
  rss: number[];
  fds: number[];
}

function fds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/** Log lines at level error (or lines that are no JSON at all) since `from` (bytes). */
function errorLines(file: string, from: number): string[] {
  const text = readFileSync(file, 'utf8').slice(from);
  return text.split('\n').filter((l) => {
    if (l.trim() === '') return false;
    try {
      return (JSON.parse(l) as { level?: string }).level === 'error';
    } catch {
      return true;
    }
  });
}

async function churn(stop: AbortSignal, counts: Record<string, number>): Promise<void> {
  const nodes = env.nodes.map((n) => n.name);
  for (const n of nodes) {
    await pods.create({
      metadata: { name: `sleeper-${n}`, namespace: ns },
      spec: {
        nodeName: n,
        hostNetwork: true,
        terminationGracePeriodSeconds: 2,
        containers: [{ name: 'main', image: `${env.registryOpen}/busybox:1.0`, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"] }],
      },
    });
  }
  for (let i = 0; !stop.aborted; i++) {
    const step = async (what: string, fn: () => Promise<unknown>): Promise<void> => {
      try {
        await fn();
        counts[what] = (counts[what] ?? 0) + 1;
      } catch (err) {
        counts[`${what} refused`] = (counts[`${what} refused`] ?? 0) + 1;
        if ((counts[`${what} refused`] ?? 0) <= 3) console.error(`soak: cannot create ${what}: ${(err as Error).message}`);
      }
    };
    // Each kind finishes on its own and its TTL removes it: the cluster's object count stays flat.
    await step('ImagePullJob', () =>
      jobs.create({ metadata: { name: `job-${i}`, namespace: ns }, spec: { image: image(i), parallelism: 2, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 20 } } }),
    );
    if (i % 3 === 0) {
      await step('ImageListPullJob', () =>
        lists.create({ metadata: { name: `list-${i}`, namespace: ns }, spec: { images: [image(i + 7), image(i + 11), image(i + 13)], parallelism: 2, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 20 } } }),
      );
    }
    if (i % 2 === 0) {
      const node = nodes[(i / 2) % nodes.length] ?? '';
      const pod = await pods.get(ns, `sleeper-${node}`).catch(() => undefined);
      if (pod?.status?.containerStatuses?.[0]?.ready === true) {
        await step('ContainerRecreateRequest', () =>
          crrs.create({ metadata: { name: `crr-${i}`, namespace: ns }, spec: { podName: `sleeper-${node}`, containers: [{ name: 'main' }], strategy: { terminationGracePeriodSeconds: 2 }, ttlSecondsAfterFinished: 20 } }),
        );
      }
    }
    await sleep(10_000);
  }
}

async function main(): Promise<void> {
  await namespaces.create({ metadata: { name: ns } });
  await defaultServiceAccount(rest, ns);
  const inst: Installation = await up(env);
  const procs = [{ name: 'manager', pid: inst.manager.pid, log: inst.manager.log }, ...inst.daemons.map((d) => ({ name: `daemon ${d.node}`, pid: d.pid, log: d.log }))];
  const logFrom = procs.map((p) => readFileSync(p.log).length);
  const counts: Record<string, number> = {};
  const stop = new AbortController();
  const churning = churn(stop.signal, counts);
  const samples: Sample[] = [];
  const t0 = Date.now();
  for (let m = 1; m <= minutes; m++) {
    await sleep(Math.max(0, t0 + m * 60_000 - Date.now()));
    const s = { minute: m, rss: procs.map((p) => rssMiB(p.pid)), fds: procs.map((p) => fds(p.pid)) };
    samples.push(s);
    console.error(`soak: minute ${m}/${minutes}: ${procs.map((p, i) => `${p.name} ${s.rss[i]?.toFixed(1)} MiB, ${s.fds[i]} fds`).join('; ')}`);
  }
  stop.abort();
  await churning;
  const errors = procs.flatMap((p, i) => errorLines(p.log, logFrom[i] ?? 0).map((l) => `${p.name}: ${l}`));
  await down(env);
  await namespaces.delete(undefined, ns).catch(() => undefined);
  await rest.close();

  const at5 = samples[4];
  const last = samples[samples.length - 1];
  const growth = (i: number, k: 'rss' | 'fds'): string => {
    const a = at5?.[k][i] ?? 0;
    const b = last?.[k][i] ?? 0;
    return a > 0 ? `${(((b - a) / a) * 100).toFixed(1)} %` : 'n/a';
  };
  const out: string[] = [];
  out.push(`## Soak (npm run bench:soak, ${minutes} min)`);
  out.push('');
  out.push(
    `kruise-ts installed on the local cluster (the manager and a daemon on each of ${env.nodes.length} nodes, host processes from the build) while an ImagePullJob every 10 s, an ImageListPullJob of 3 images every 30 s and a ContainerRecreateRequest every 20 s came and went (TTL 20 s). Created: ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}.`,
  );
  out.push('');
  out.push(`| minute | ${procs.map((p) => `${p.name} RSS MiB | fds`).join(' | ')} |`);
  out.push(`|---|${procs.map(() => '---|---').join('|')}|`);
  for (const s of samples) out.push(`| ${s.minute} | ${procs.map((_, i) => `${s.rss[i]?.toFixed(1)} | ${s.fds[i]}`).join(' | ')} |`);
  out.push('');
  out.push(`Growth from minute 5 to minute ${last?.minute ?? 0} (goal: under 5 %): ${procs.map((p, i) => `${p.name} RSS ${growth(i, 'rss')}, fds ${growth(i, 'fds')}`).join('; ')}.`);
  out.push('');
  out.push(`Error log lines (goal: none): ${errors.length}${errors.length > 0 ? `; the first: ${errors.slice(0, 5).map((e) => `\`${e.slice(0, 300)}\``).join(', ')}` : ''}.`);
  console.log(out.join('\n'));
}

await main();
