import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import { restartManager } from '../../hack/kruise.js';
import { CriClient } from '../../daemon/cri/client.js';
import { Resource } from '../../kube/resource.js';
import { nodeImages, tagStatus } from '../helpers/daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, kruise } from '../helpers/kube.js';
import { ThrottleProxy } from '../helpers/throttle.js';

// An ImagePullJob's status message counts the bytes of a node mid-pull: the shared manager
// restarted with a 1 s progress interval, node-1's real daemon pulling a 52 MB image through a
// registry throttled to 3 MB/s. Upstream's figure, finished nodes over desired, says 0.0% until the
// node finishes.
const env = clusterEnv();
const rest = restClient();
const nis = nodeImages(rest);
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
const first = env.nodes[0]?.name ?? '';
let ns = '';
let slow: ThrottleProxy;

beforeAll(async () => {
  ns = await createNamespace(rest, 'jobprogress');
  slow = await ThrottleProxy.start(env.registryOpen, 3_000_000);
  await restartManager(env, ['--job-progress-interval-seconds=1']);
}, 60_000);
afterAll(async () => {
  await jobs.delete(ns, 'bytes').catch(() => undefined);
  await restartManager(env);
  await deleteNamespace(rest, ns);
  await slow.stop();
  await rest.close();
}, 60_000);

const percent = (message: string | undefined): number | undefined => {
  const m = /^job is running, progress (\d+\.\d)%$/.exec(message ?? '');
  return m ? Number(m[1]) : undefined;
};

describe("an ImagePullJob's progress message", () => {
  it('moves with the bytes of a node mid-pull, and the job completes', async () => {
    const image = `${slow.address}/big`;
    // Every name of the image goes from node-1 (other suites pull it under the registry's own
    // address): containerd then deletes its layers, and the pull has to fetch every byte.
    const cri = new CriClient(env.nodes[0]?.criSocket ?? '');
    try {
      const { images = [] } = await cri.image('ListImages', {});
      for (const img of images) if ((img.repo_tags ?? []).some((t: string) => t.endsWith('/big:1.0')) && img.id) await cri.image('RemoveImage', { image: { image: img.id } });
    } finally {
      cri.close();
    }
    await jobs.create({
      metadata: { name: 'bytes', namespace: ns },
      spec: { image: `${image}:1.0`, selector: { names: [first] }, completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 120, backoffLimit: 1 } },
    });
    const midway = await eventually(async () => {
      const job = await jobs.get(ns, 'bytes');
      const p = percent(job.status?.message);
      expect(job.status).toMatchObject({ desired: 1, active: 1, succeeded: 0 });
      expect(p).toBeGreaterThan(0);
      expect(p).toBeLessThan(100);
      return p;
    }, 60_000, 200);
    // The figure is the node's own byte share, as its NodeImage reports it.
    const nodeProgress = tagStatus(await nis.get(undefined, first), `${slow.address}/big`, '1.0')?.progress ?? 0;
    expect(nodeProgress).toBeGreaterThanOrEqual(midway ?? 0);
    await eventually(async () => {
      const job = await jobs.get(ns, 'bytes');
      expect(job.status).toMatchObject({ succeeded: 1, message: 'job has completed' });
    }, 90_000, 500);
  }, 180_000);
});
