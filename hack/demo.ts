// The demo's story on a running local environment: kruise-ts installed as users install it (the
// image built here, `kubectl apply -k`: a manager Deployment and a daemon pod on every node), the
// examples of deploy/examples applied, live progress, a summary.
//   node dist/hack/demo.js ENV_JSON
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import type { PodTemplateSpec } from '../api/types/core.js';
import type { ImageListPullJob } from '../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../api/types/imagepulljob.js';
import type { CloneSet } from '../api/types/workloads.js';
import { installCrds } from '../kube/crds.js';
import { kruise } from '../kube/kruise.js';
import { loadClusterAccess } from '../kube/kubeconfig.js';
import { rootLogger } from '../kube/log.js';
import { ApiError, RestClient } from '../kube/rest.js';
import type { KubeObject } from '../api/types/common.js';
import { core, Resource, type ResourceType } from '../kube/resource.js';
import { eventuallyTrue } from './wait.js';
import { status, watchCrr, watchJob, type Output } from '../cli/commands.js';
import { inPlaceRolloutStarted } from './cloneset-standin.js';
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

  const [n1, n2] = env.nodes.map((n) => n.name);
  if (!n1 || !n2) throw new Error('the demo needs two nodes');
  say(
    `CloneSet image pre-download (deploy/examples/cloneset.yaml). This cluster runs no OpenKruise, so a STAND-IN for its CloneSet controller (hack/cloneset-standin.ts) ` +
      `writes what that controller writes once an in-place rollout from nginx:1.25 to nginx:1.26 has updated its first pod: the CloneSet CRD (a minimal copy), both ControllerRevisions, ` +
      `six pods (five old ones on ${n1}, the updated one on ${n2}) and the status; kruise-manager does the rest, as next to OpenKruise`,
  );
  await installCrds(rest, join(root, 'test', 'fixtures', 'crds'));
  const [cs] = loadAll(readFileSync(join(root, 'deploy', 'examples', 'cloneset.yaml'), 'utf8')) as CloneSet[];
  if (!cs) throw new Error('deploy/examples/cloneset.yaml holds no CloneSet');
  const oldTemplate: PodTemplateSpec = { ...cs.spec.template, spec: { ...cs.spec.template.spec, containers: (cs.spec.template.spec?.containers ?? []).map((c) => ({ ...c, image: 'nginx:1.25' })) } };
  const placements = [...Array.from({ length: 5 }, () => ({ node: n1, updated: false })), { node: n2, updated: true }];
  const { updateRevision } = await inPlaceRolloutStarted(rest, kruise, cs, oldTemplate, placements, 180_000);
  const preDownload = `${updateRevision}-web`;
  out.write(`stand-in: CloneSet default/web mid-rollout, update revision ${updateRevision}; waiting for kruise-manager's ImagePullJob ${preDownload}\n`);
  const jobs = new Resource<ImagePullJob & KubeObject>(rest, kruise.imagePullJobs);
  const jobCreated = await eventuallyTrue(async () => (await jobs.get('default', preDownload)).metadata?.uid !== undefined, 60_000);
  const preDownloaded = jobCreated && (await watchJob(rest, kruise, 'default', preDownload, out, 300_000)) === 0;
  const pd = jobCreated ? await jobs.get('default', preDownload) : undefined;
  out.write(`ImagePullJob ${preDownload}: nginx:1.26 on ${pd?.status?.succeeded ?? 0} of ${pd?.status?.desired ?? 0} node(s), the nodes of the pods not yet updated\n`);
  results.push(['CloneSet web: nginx:1.26 pre-downloaded on the node of its old pods only', preDownloaded && pd?.status?.desired === 1 && pd.status.succeeded === 1]);

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
