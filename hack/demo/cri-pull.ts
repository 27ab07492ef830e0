// Demo step: pulls sample images through kruise-ts's CRI client and shows byte-level progress
// read from containerd's content API while each pull runs.
import { readFileSync } from 'node:fs';
import { CriClient } from '../../daemon/cri/client.js';
import { detectRuntime } from '../../daemon/cri/endpoint.js';

interface DemoEnv {
  criSocket: string;
  registryOpen: string;
}

const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as DemoEnv;
const runtime = await detectRuntime({ endpoint: env.criSocket });
console.log(`runtime: ${runtime.runtimeName} ${runtime.runtimeVersion} (CRI ${runtime.apiVersion}) at ${runtime.endpoint}`);
const cri = new CriClient(runtime.endpoint);
for (const image of [`${env.registryOpen}/busybox:1.0`, `${env.registryOpen}/big:1.0`]) {
  await cri.image('RemoveImage', { image: { image } });
  const t0 = Date.now();
  let done = false;
  const pull = cri.pullImage(image, undefined, undefined).finally(() => {
    done = true;
  });
  while (!done) {
    const layers = (await cri.ingests()).filter((s) => s.ref.startsWith('layer-'));
    const got = layers.reduce((a, s) => a + Number(s.offset), 0);
    const total = layers.reduce((a, s) => a + Number(s.total), 0);
    if (total > 0) console.log(`  ${image}: ${((100 * got) / total).toFixed(0)}% of ${(total / 1e6).toFixed(1)} MB`);
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log(`pulled ${image} -> ${await pull} in ${Date.now() - t0} ms`);
}
cri.close();
