// The demo's story on a running local environment: kruise-ts installed as users install it (the
// image built here, `kubectl apply -k`: a manager Deployment and a daemon pod on every node), the
// examples of deploy/examples applied, live progress, a summary.
//   node dist/hack/demo.js ENV_JSON
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import type { ImageListPullJob } from '../api/types/imagelistpulljob.js';
import { kruise } from '../kube/kruise.js';
import { loadClusterAccess } from '../kube/kubeconfig.js';
import { rootLogger } from '../kube/log.js';
import { ApiError, RestClient } from '../kube/rest.js';
import type { KubeObject } from '../api/types/common.js';
import { core, Resource, type ResourceType } from '../kube/resource.js';
import { eventuallyTrue } from './wait.js';
import { status, watchCrr, watchJob, type Output } from '../cli/commands.js';
import { installDir, podsUp, type PodEnv } from './install-pods.js';
import { defaultServiceAccount } from './wait.js';

rootLogger('error');
const root = join(import.meta.dirname, '..', '..');
const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as PodEnv;
const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
const out: Output = { write: (t) => void process.stdout.write(t), tty: process.stdout.isTTY === true };
const say = (t: string): void => void process.stdout.write(`\n==> ${t}\n`);
const types: Record<string, ResourceType> = {
  Pod: core.pods,
  ImagePullJob: kruise.imagePullJobs,
  ImageListPullJob: kruise.imageListPullJobs,
  ContainerRecreateRequest: kruise.crrs,
  CloneSet: kruise.cloneSets,
};

async function apply(file: string): Promise<void> {
  for (const doc of loadAll(readFileSync(join(root, 'deploy', 'examples', file), 'utf8')) as KubeObject[]) {
    const type = types[doc.kind ?? ''];
    if (!type) throw new Error(`${file}: no handling for kind ${doc.kind}`);
    const res = new Resource<KubeObject>(rest, type);
    try {
      await res.create(doc);
    } catch (err) {
      if (!(err instanceof ApiError && err.alreadyExists)) throw err;
    }
    out.write(`applied ${doc.kind} ${doc.metadata?.namespace}/${doc.metadata?.name} (deploy/examples/${file})\n`);
  }
}

const results: Array<[string, boolean]> = [];
let failed: boolean;
try {
  say('installing kruise-ts: its image, then kubectl apply -k (deploy/overlays/local: a kruise-manager Deployment, a kruise-daemon on every node)');
  const inst = await podsUp(env);
  out.write(`${inst.image} installed with kubectl apply -k ${installDir(env)}: every pod Ready ${inst.readySeconds.toFixed(1)} s after the apply\n`);

  await defaultServiceAccount(rest, 'default');
  say('ImagePullJob: pre-pull nginx:1.25 on every node (deploy/examples/imagepulljob.yaml)');
  await apply('imagepulljob.yaml');
  results.push(['ImagePullJob prewarm-nginx', (await watchJob(rest, kruise, 'default', 'prewarm-nginx', out, 300_000)) === 0]);

  say('ImageListPullJob: two images at once (deploy/examples/imagelistpulljob.yaml)');
  await apply('imagelistpulljob.yaml');
  const lists = new Resource<ImageListPullJob & KubeObject>(rest, kruise.imageListPullJobs);
  const listDone = await eventuallyTrue(async () => {
    const l = await lists.get('default', 'prewarm-base-images');
    return l.status?.completionTime !== undefined && (l.status.completed ?? 0) === l.spec.images.length;
  }, 300_000);
  const list = await lists.get('default', 'prewarm-base-images');
  out.write(`ImageListPullJob prewarm-base-images: ${list.status?.succeeded ?? 0} of ${list.spec.images.length} images pulled everywhere\n`);
  results.push(['ImageListPullJob prewarm-base-images', listDone && (list.status?.succeeded ?? 0) === list.spec.images.length]);

  say('ContainerRecreateRequest: restart the containers of a running pod in place (deploy/examples/crr.yaml)');
  await apply('crr-pod.yaml');
  const pods = new Resource<KubeObject & { status?: { containerStatuses?: Array<{ ready?: boolean }> } }>(rest, core.pods);
  await eventuallyTrue(async () => (await pods.get('default', 'demo-app')).status?.containerStatuses?.every((c) => c.ready) === true, 120_000);
  await apply('crr.yaml');
  results.push(['ContainerRecreateRequest restart-demo-app', (await watchCrr(rest, kruise, 'default', 'restart-demo-app', out, 300_000)) === 0]);

  say('CloneSet image pre-download (deploy/examples/cloneset.yaml) needs OpenKruise\'s CloneSet controller, which this local cluster does not run: skipped here');

  say('summary');
  await status(rest, kruise, 'default', out);
  out.write('\n');
  for (const [what, ok] of results) out.write(`${ok ? 'OK    ' : 'FAILED'} ${what}\n`);
  failed = results.some(([, ok]) => !ok);
  out.write(failed ? '\ndemo finished with failures\n' : '\ndemo finished: everything succeeded\n');
} catch (err) {
  failed = true;
  out.write(`\ndemo failed: ${(err as Error).message}\n`);
} finally {
  await rest.close();
}
process.exitCode = failed ? 1 : 0;
