// What a list of every NodeImage costs the process that caches them: read whole (one string, parsed
// at once, as kube/informer.ts did until this benchmark's commit) beside streamed item by item (as it
// does now), each in a process of its own, side by side in one run. The list is the one a re-list
// after a 410 makes: unpaginated, from the API server's watch cache. Objects go through the
// manager's own Interner, as its cache's do.
//   node dist/hack/bench/relist-memory.js ENV_JSON
//   (BENCH_RELIST_NODES NodeImages, default 2000, with BENCH_RELIST_TAGS tags each, default 50)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import type { NodeImage, ImageSpec, ImageStatus } from '../../api/types/nodeimage.js';
import { LABEL_FAKE_NODE_IMAGE } from '../../api/metadata-keys.js';
import { Informer } from '../../kube/informer.js';
import { Interner } from '../../kube/intern.js';
import { kruise } from '../../kube/kruise.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { ApiError, RestClient } from '../../kube/rest.js';
import { Resource } from '../../kube/resource.js';
import { MANAGER_V8_FLAGS } from '../v8-flags.js';
import { fmt, summarize } from './stats.js';

const MODES = ['whole', 'streamed'] as const;
type Mode = (typeof MODES)[number];
const SELECTOR = 'kruise-bench/relist=1';

interface Sample {
  ms: number;
  peakRssMiB: number;
  heapAfterMiB: number;
  items: number;
}

const log = (msg: string): void => void process.stderr.write(`[relist-memory] ${msg}\n`);
const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

function nodeImages(kubeconfig: string): Resource<NodeImage> {
  return new Resource<NodeImage>(new RestClient(loadClusterAccess(kubeconfig), { qps: 0 }), kruise.nodeImages);
}

/** One list into a cache, in this process: what the child reports on its stdout. */
async function child(mode: Mode, kubeconfig: string): Promise<void> {
  const nis = nodeImages(kubeconfig);
  const interner = new Interner();
  const t0 = performance.now();
  // Measured while the cache is still held, as a manager's is.
  const report = (items: number): void => {
    const ms = performance.now() - t0;
    global.gc?.();
    const sample: Sample = { ms, peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024), heapAfterMiB: mib(process.memoryUsage().heapUsed), items };
    process.stdout.write(JSON.stringify(sample));
  };
  if (mode === 'whole') {
    const cache = new Map<string, NodeImage>();
    const list = await nis.list(undefined, { labelSelector: SELECTOR, resourceVersion: '0' });
    for (const ni of list.items) {
      delete ni.metadata?.managedFields;
      cache.set(ni.metadata?.name ?? '', interner.intern(ni));
    }
    report(cache.size);
  } else {
    const ac = new AbortController();
    const inf = new Informer<NodeImage>(nis, { labelSelector: SELECTOR, listFromWatchCache: true, transform: (o) => interner.intern(o) });
    void inf.run(ac.signal);
    await inf.synced;
    report(inf.keys().length);
    ac.abort();
  }
  process.exit(0);
}

function tagsOf(n: number, tags: number): { images: Record<string, ImageSpec>; statuses: Record<string, ImageStatus> } {
  const images: Record<string, ImageSpec> = {};
  const statuses: Record<string, ImageStatus> = {};
  for (let t = 0; t < tags; t++) {
    const image = `registry.bench.local:5000/bench/image-${t}`;
    images[image] = {
      tags: [
        {
          tag: 'v1',
          createdAt: '2026-12-01T00:00:00Z',
          pullPolicy: { ttlSecondsAfterFinished: 300, timeoutSeconds: 600, backoffLimit: 3, activeDeadlineSeconds: 1200 },
          ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', namespace: 'default', name: `job-${t}`, uid: `00000000-0000-4000-8000-${String(t).padStart(12, '0')}` }],
          version: 0,
        },
      ],
    };
    statuses[image] = {
      tags: [{ tag: 'v1', phase: 'Succeeded', progress: 100, startTime: '2026-12-01T00:00:01Z', completionTime: '2026-12-01T00:00:05Z', version: 0, imageID: `sha256:${(n * 7919 + t).toString(16).padStart(64, '0')}` }],
    };
  }
  return { images, statuses };
}

/** The NodeImages the lists read, created afresh (a run's leftovers removed first). */
async function seed(nis: Resource<NodeImage>, count: number, tags: number): Promise<void> {
  await removeAll(nis);
  const limit = pLimit(32);
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: count }, (_, n) =>
      limit(async () => {
        const { images, statuses } = tagsOf(n, tags);
        const created = await nis.create({
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'NodeImage',
          metadata: { name: `relist-bench-${String(n).padStart(5, '0')}`, labels: { 'kruise-bench/relist': '1', [LABEL_FAKE_NODE_IMAGE]: 'true' } },
          spec: { images },
        });
        await nis.updateStatus({ ...created, status: { desired: tags, succeeded: tags, failed: 0, pulling: 0, waiting: 0, imageStatuses: statuses } });
      }),
    ),
  );
  log(`created ${count} NodeImages with ${tags} tags each in ${Math.round((Date.now() - t0) / 1000)} s`);
  // The lists come from the watch cache as it is (resourceVersion=0): it must have caught up first.
  // Asked for a version it has not reached, it waits 3 s, then answers 504 (kubernetes#91073).
  const now = (await nis.list(undefined, { limit: 1 })).metadata?.resourceVersion ?? '';
  for (let attempt = 1; ; attempt++) {
    let cached = 0;
    try {
      await nis.listEach(undefined, { labelSelector: SELECTOR, resourceVersion: now }, () => cached++);
    } catch (err) {
      if (err instanceof ApiError && err.status === 504 && attempt < 60) continue;
      throw err;
    }
    if (cached !== count) throw new Error(`the watch cache holds ${cached} of the ${count} NodeImages`);
    return;
  }
}

async function removeAll(nis: Resource<NodeImage>): Promise<void> {
  // Only the names are kept: read whole, 5,000 of these NodeImages are the very list this measures.
  const names: string[] = [];
  await nis.listEach(undefined, { labelSelector: SELECTOR }, (ni) => names.push(ni.metadata?.name ?? ''));
  const limit = pLimit(32);
  await Promise.all(names.map((name) => limit(() => nis.delete(undefined, name).catch((err: unknown) => (err instanceof ApiError && err.notFound ? undefined : Promise.reject(err))))));
}

/** One list in a child process: its figures, or why it died (at 5,000 NodeImages a list read whole can outgrow the heap). */
function runChild(mode: Mode, envJson: string): Promise<Sample | { died: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...MANAGER_V8_FLAGS, '--expose-gc', fileURLToPath(import.meta.url), '--child', mode, envJson], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4096)));
    p.on('error', reject);
    p.on('exit', (code, signal) => {
      if (code === 0) resolve(JSON.parse(out) as Sample);
      else if (/heap limit/.test(err)) resolve({ died: 'out of heap' });
      else reject(new Error(`relist-memory child (${mode}) exited with ${code ?? signal}: ${err}`));
    });
  });
}

async function main(): Promise<void> {
  const [first, second, third] = process.argv.slice(2);
  if (first === '--child') {
    const env = JSON.parse(readFileSync(third ?? '', 'utf8')) as { kubeconfig: string };
    return child(second as Mode, env.kubeconfig);
  }
  const envJson = first ?? '';
  const env = JSON.parse(readFileSync(envJson, 'utf8')) as { kubeconfig: string };
  const count = Number(process.env['BENCH_RELIST_NODES'] ?? 2000);
  const tags = Number(process.env['BENCH_RELIST_TAGS'] ?? 50);
  const runs = Number(process.env['BENCH_RUNS'] ?? 5);
  const nis = nodeImages(env.kubeconfig);
  await seed(nis, count, tags);
  const samples: Record<Mode, Sample[]> = { whole: [], streamed: [] };
  const deaths: Record<Mode, number> = { whole: 0, streamed: 0 };
  try {
    for (let r = 0; r < runs; r++) {
      // Alternating, so the machine's noise falls on both alike.
      for (const mode of r % 2 === 0 ? MODES : [...MODES].reverse()) {
        const s = await runChild(mode, envJson);
        log(`${mode} run ${r + 1}: ${JSON.stringify(s)}`);
        if ('died' in s) {
          deaths[mode]++;
          continue;
        }
        if (s.items !== count) throw new Error(`${mode}: listed ${s.items} NodeImages, not ${count}`);
        samples[mode].push(s);
      }
    }
  } finally {
    await removeAll(nis);
  }
  const figure = (mode: Mode, f: (s: Sample) => number, unit: string): string => {
    const died = deaths[mode] > 0 ? `ran out of heap in ${deaths[mode]} of ${runs} runs` : '';
    if (samples[mode].length === 0) return died;
    return `${fmt(summarize(samples[mode].map(f)), unit)}${died ? `; ${died}` : ''}`;
  };
  const ratio = (f: (s: Sample) => number): string => {
    if (samples.whole.length === 0 || samples.streamed.length === 0) return '–';
    const med = (mode: Mode): number => summarize(samples[mode].map(f)).median;
    return (med('whole') / med('streamed')).toFixed(2);
  };
  console.log(`## A re-list of ${count} NodeImages: read whole vs streamed`);
  console.log();
  console.log(
    `${count} NodeImages with ${tags} tags each (spec and status), listed unpaginated from the API server's watch cache as a re-list after a 410 is, into a cache through the manager's Interner; each list in a process of its own with the manager's V8 flags; ${runs} runs of each, alternating (hack/bench/relist-memory.ts).`,
  );
  console.log();
  console.log('| | read whole | streamed | whole / streamed |');
  console.log('| --- | --- | --- | --- |');
  console.log(`| peak RSS | ${figure('whole', (s) => s.peakRssMiB, 'MiB')} | ${figure('streamed', (s) => s.peakRssMiB, 'MiB')} | ${ratio((s) => s.peakRssMiB)} |`);
  console.log(`| heap held after | ${figure('whole', (s) => s.heapAfterMiB, 'MiB')} | ${figure('streamed', (s) => s.heapAfterMiB, 'MiB')} | ${ratio((s) => s.heapAfterMiB)} |`);
  console.log(`| list to cache | ${figure('whole', (s) => s.ms, 'ms')} | ${figure('streamed', (s) => s.ms, 'ms')} | ${ratio((s) => s.ms)} |`);
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
