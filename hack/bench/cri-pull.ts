// CRI pull benchmark: direct calls through kruise-ts's CRI client on the real containerd.
// Prints one markdown table section on stdout.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CriClient } from '../../daemon/cri/client.js';
import { fmt, summarize, timeIt } from './stats.js';

interface BenchEnv {
  criSocket: string;
  containerdDir: string;
  registryOpen: string;
}

const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as BenchEnv;
const runs = Number(process.env['BENCH_RUNS'] ?? 5);
const cri = new CriClient(env.criSocket);
const root = join(import.meta.dirname, '..', '..', '..');

async function cold(images: string[], pull: () => Promise<unknown>): Promise<number> {
  await Promise.all(images.map((image) => cri.image('RemoveImage', { image: { image } })));
  return timeIt(pull);
}

const small = `${env.registryOpen}/busybox:1.1`;
const big = `${env.registryOpen}/big:1.0`;
const twenty = Array.from({ length: 20 }, (_, i) => `${env.registryOpen}/many-${String(21 + i).padStart(3, '0')}:1.0`);

const rows: Array<[string, string]> = [];
const smallT: number[] = [];
const bigT: number[] = [];
const serialT: number[] = [];
const concT: number[] = [];
const recoverT: number[] = [];
for (let r = 0; r < runs; r++) {
  smallT.push(await cold([small], () => cri.pullImage(small, undefined, undefined)));
  bigT.push(await cold([big], () => cri.pullImage(big, undefined, undefined)));
  serialT.push(
    await cold(twenty, async () => {
      for (const i of twenty) await cri.pullImage(i, undefined, undefined);
    }),
  );
  concT.push(await cold(twenty, () => Promise.all(twenty.map((i) => cri.pullImage(i, undefined, undefined)))));
}
for (let r = 0; r < Math.min(runs, 3); r++) {
  execFileSync('bash', [join(root, 'hack', 'containerd.sh'), 'stop', env.containerdDir]);
  const pending = cri.runtime('Version', { version: 'v1' }, { timeoutMs: 60_000 });
  const t0 = performance.now();
  execFileSync('bash', [join(root, 'hack', 'containerd.sh'), 'start', env.containerdDir]);
  await pending;
  recoverT.push(performance.now() - t0);
}
cri.close();
const s = summarize(serialT);
const c = summarize(concT);
rows.push(['PullImage busybox:1.1 (cold, ~1 MB new)', fmt(summarize(smallT))]);
rows.push(['PullImage big:1.0 (cold, 52 MB)', fmt(summarize(bigT))]);
rows.push(['20 distinct images, serial', fmt(s)]);
rows.push(['20 distinct images, concurrent', fmt(c)]);
rows.push(['serial / concurrent (medians)', (s.median / c.median).toFixed(2)]);
rows.push(['containerd restart → client call answered (incl. containerd start)', fmt(summarize(recoverT))]);
console.log('## CRI client on real containerd\n\n| measurement | median (min–max, runs) |\n| --- | --- |');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
console.log('');
