import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { KubeObject } from '../../api/types/common.js';
import { restartManager } from '../../hack/kruise.js';
import { CriClient } from '../../daemon/cri/client.js';
import { core, Resource } from '../../kube/resource.js';
import { nodeImages, tagStatus } from '../helpers/daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, kruise } from '../helpers/kube.js';

// A completionPolicy Never job end to end: the shared manager restarted with a 20 s re-pull
// interval instead of a day, the real daemons of the two kubelet nodes. Its finished tags expire
// and the job adds them again, so the daemon pulls again: an image the node lost meanwhile (as to
// the kubelet's image GC) is back in the node's containerd. A node that joins the selector later
// gets the image too.
const env = clusterEnv();
const rest = restClient();
const nis = nodeImages(rest);
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
const nodes = new Resource<KubeObject>(rest, core.nodes);
const [first = '', second = ''] = env.nodes.map((n) => n.name);
let ns = '';
let label = '';

beforeAll(async () => {
  ns = await createNamespace(rest, 'never');
  label = `kruise-ts.test/${ns}`;
  await restartManager(env, ['--never-repull-interval-seconds=20']);
}, 60_000);
afterAll(async () => {
  await jobs.delete(ns, 'daily').catch(() => undefined);
  for (const n of [first, second]) await nodes.patch(undefined, n, { metadata: { labels: { [label]: null } } }).catch(() => undefined);
  await restartManager(env);
  await deleteNamespace(rest, ns);
  await rest.close();
}, 60_000);

const image = (): string => `${env.registryOpen}/many-034`;

async function tagOn(node: string): Promise<{ phase?: string; completionTime?: string }> {
  const s = tagStatus(await nis.get(undefined, node), image(), '1.0');
  return { ...(s?.phase ? { phase: s.phase } : {}), ...(s?.completionTime ? { completionTime: s.completionTime } : {}) };
}

describe('a completionPolicy Never job', () => {
  it('pulls again each interval, and on a node that joins its selector', async () => {
    await nodes.patch(undefined, first, { metadata: { labels: { [label]: 'yes' } } });
    await jobs.create({
      metadata: { name: 'daily', namespace: ns },
      spec: { image: `${image()}:1.0`, imagePullPolicy: 'Always', selector: { matchLabels: { [label]: 'yes' } }, completionPolicy: { type: 'Never' }, pullPolicy: { timeoutSeconds: 60, backoffLimit: 1 } },
    });
    const pulled = await eventually(async () => {
      const t = await tagOn(first);
      expect(t.phase).toBe('Succeeded');
      return t;
    }, 60_000, 250);

    // A node joins: its NodeImage takes the label from the Node, and the job adds the tag there.
    await nodes.patch(undefined, second, { metadata: { labels: { [label]: 'yes' } } });
    await eventually(async () => expect((await tagOn(second)).phase).toBe('Succeeded'), 60_000, 250);

    expect(pulled.completionTime).toBeDefined();
    // The first node loses the image, as to the kubelet's image GC. 20 s (give or take 2) after its
    // round finished, the tag expires, comes back and is pulled again: a later round, and the image
    // in the node's containerd again.
    const cri = new CriClient(env.nodes[0]?.criSocket ?? '');
    try {
      await cri.image('RemoveImage', { image: { image: `${image()}:1.0` } });
      const removedAt = Math.floor(Date.now() / 1000) * 1000;
      await eventually(async () => {
        const t = await tagOn(first);
        expect(t.phase).toBe('Succeeded');
        expect(Date.parse(t.completionTime ?? '')).toBeGreaterThan(Date.parse(pulled.completionTime ?? ''));
        expect(Date.parse(t.completionTime ?? '')).toBeGreaterThanOrEqual(removedAt);
        expect((await cri.image('ImageStatus', { image: { image: `${image()}:1.0` } })).image?.id).toBeTruthy();
      }, 90_000, 500);
    } finally {
      cri.close();
    }
    const job = await jobs.get(ns, 'daily');
    expect(job.status?.completionTime).toBeUndefined();
    expect(job.status).toMatchObject({ desired: 2 });
  }, 240_000);
});
