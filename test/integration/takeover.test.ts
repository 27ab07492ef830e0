import type { KubeObject } from '../../api/types/common.js';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';
import type { Pod } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { CriClient } from '../../daemon/cri/client.js';
import { startInstalledDaemon, stopInstalledDaemon } from '../../hack/kruise.js';
import { GROUP } from '../../api/group-version.js';
import { DEFAULT_DAEMON_CONFIG_NAMESPACE } from '../../api/installation.js';
import { RestClient } from '../../kube/rest.js';
import { core, Resource } from '../../kube/resource.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { updateWithRetry } from '../../kube/write.js';
import { copyName } from '../../manager/imagepulljob/secrets.js';
import { completedCrr, container, crrSpec, podSpec, runningPod, statusOf } from '../helpers/crr.js';
import { nodeImages, tagStatus } from '../helpers/daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, kruise, restClient } from '../helpers/kube.js';

// Taking over from OpenKruise's daemon and controllers (KruiseDaemon=true until now): kruise-ts's
// daemons start on nodes whose NodeImage status upstream's daemon wrote, next to a job in flight
// whose NodeImages still reference upstream's secret copies, and a CRR whose container upstream's
// daemon already stopped. Nothing pulled is pulled again, no container restarts twice, the job
// keeps its counts. Objects are written the way upstream writes them: status by a client calling
// itself kruise-daemon, the CRR through v1alpha1 (OpenKruise v1.9 has no other).
const env = clusterEnv();
const rest = restClient();
const upstreamDaemon = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0, userAgent: 'kruise-daemon/kruise-daemon-imagepuller' });
const nis = nodeImages(rest);
const upstreamNis = new Resource<NodeImage>(upstreamDaemon, kruise.nodeImages);
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
const crrs = new Resource<ContainerRecreateRequest>(rest, kruise.crrs);
const upstreamCrrs = new Resource<KubeObject & { status?: unknown }>(upstreamDaemon, { group: GROUP, version: 'v1alpha1', plural: 'containerrecreaterequests', kind: 'ContainerRecreateRequest', namespaced: true });
const pods = new Resource<Pod & KubeObject>(rest, core.pods);
const secrets = new Resource<KubeObject & { type?: string; data?: Record<string, string> }>(rest, core.secrets);
const [node1, node2] = env.nodes.map((n) => n.name) as [string, string];
const cri1 = new CriClient(env.nodes[0]?.criSocket ?? '');
const cri2 = new CriClient(env.nodes[1]?.criSocket ?? '');
let ns = '';

beforeAll(async () => {
  ns = await createNamespace(rest, 'takeover');
});
afterAll(async () => {
  cri1.close();
  cri2.close();
  await upstreamDaemon.close();
  await deleteNamespace(rest, ns);
});

const present = async (cri: CriClient, ref: string): Promise<boolean> => !!(await cri.image('ImageStatus', { image: { image: ref } })).image?.id;

describe('taking over from OpenKruise', () => {
  it("adopts upstream's recorded pulls, its job in flight and its CRR mid-recreation: no second pull, no second restart, no lost counts", async () => {
    const image = `${env.registryAuth}/private/busybox`;
    const ref = `${image}:1.0`;
    for (const cri of [cri1, cri2]) await cri.image('RemoveImage', { image: { image: ref } });
    const config = { auths: { [env.registryAuth]: { username: env.registryUser, password: env.registryPassword } } };
    await secrets.create({ metadata: { name: 'cred', namespace: ns }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') } });
    await pods.create(podSpec(ns, 'app', node1, [container('main', ['sleep', 'infinity'])], { grace: 1 }) as Pod & KubeObject);
    await runningPod(pods, ns, 'app');

    const pulledAt = new Date(Date.now() - 5_000).toISOString().replace(/\.\d+Z$/, 'Z');
    // Upstream's daemons are the ones running: kruise-ts's are not, yet.
    await stopInstalledDaemon(env, node1, 'SIGTERM');
    await stopInstalledDaemon(env, node2, 'SIGTERM');
    try {
      await jobs.create({ metadata: { name: 'inflight', namespace: ns }, spec: { image: ref, pullSecrets: ['cred'], selector: { names: [node1, node2] }, completionPolicy: { type: 'Always' } } });
      const version = await eventually(async () => {
        const t = (await nis.get(undefined, node1)).spec?.images?.[image]?.tags?.find((x) => x.tag === '1.0');
        if (!t) throw new Error('tag not in the NodeImage yet');
        return t.version ?? 0;
      });
      // What upstream left: node-1 pulled it, node-2 is part-way through...
      for (const [node, tag] of [
        [node1, { tag: '1.0', phase: 'Succeeded', progress: 100, startTime: pulledAt, completionTime: pulledAt, version, imageID: `${image}@sha256:${'1'.repeat(64)}` }],
        [node2, { tag: '1.0', phase: 'Pulling', progress: 40, startTime: pulledAt, version }],
      ] as const) {
        await updateWithRetry(
          upstreamNis,
          undefined,
          node,
          (ni) => ({ ...ni, status: { ...ni.status, desired: ni.status?.desired ?? 0, imageStatuses: { ...ni.status?.imageStatuses, [image]: { tags: [tag] } } } }),
          { status: true },
        );
      }
      // ...with its own secret copy, in its namespace (after the status: a reference written
      // back retries a round that has not succeeded).
      await updateWithRetry(nis, undefined, node1, (ni) => {
        const entry = ni.spec?.images?.[image];
        if (!entry) return undefined;
        return { ...ni, spec: { images: { ...ni.spec?.images, [image]: { ...entry, pullSecrets: [{ namespace: 'kruise-daemon-config', name: 'cred-upstream', mode: 'batch' }] } } } };
      });
      // Upstream's daemon stopped the CRR's container (the kubelet starts it again) and said so.
      await crrs.create(crrSpec(ns, 'restart', 'app', ['main']));
      await upstreamCrrs.patchStatus(ns, 'restart', { status: { phase: 'Recreating', containerRecreateStates: [{ name: 'main', phase: 'Recreating', isKilled: true }] } });
      const id = statusOf(await pods.get(ns, 'app'), 'main').containerID?.replace(/^containerd:\/\//, '') ?? '';
      await cri1.runtime('StopContainer', { container_id: id, timeout: 0 });
      await eventually(async () => expect(statusOf(await pods.get(ns, 'app'), 'main').restartCount).toBe(1), 60_000, 200);
    } finally {
      await startInstalledDaemon(env, node1);
      await startInstalledDaemon(env, node2);
    }

    const job = await eventually(async () => {
      const j = await jobs.get(ns, 'inflight');
      if (!j.status?.completionTime) throw new Error(`not completed: ${JSON.stringify(j.status)}`);
      return j;
    }, 120_000, 250);
    expect(job.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0 });
    // node-1's result was adopted: the image was never pulled there.
    expect(await present(cri1, ref)).toBe(false);
    expect(tagStatus(await nis.get(undefined, node1), image, '1.0')).toMatchObject({ phase: 'Succeeded', completionTime: pulledAt });
    // node-2 finished the pull with kruise-ts's own copy of the job's secret.
    expect(await present(cri2, ref)).toBe(true);

    const crr = await completedCrr(crrs, ns, 'restart', 60_000);
    expect(crr.status?.containerRecreateStates).toEqual([expect.objectContaining({ name: 'main', phase: 'Succeeded' })]);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(statusOf(await pods.get(ns, 'app'), 'main').restartCount).toBe(1);
  }, 300_000);

  it("drops pull-secret references outside the daemons' namespace (upstream's copies) for kruise-ts's own", async () => {
    await jobs.create({ metadata: { name: 'secrets', namespace: ns }, spec: { image: `${env.registryAuth}/private/busybox:1.0`, pullSecrets: ['cred'], selector: { names: [node1] }, completionPolicy: { type: 'Never' } } });
    const image = `${env.registryAuth}/private/busybox`;
    await eventually(async () => expect((await nis.get(undefined, node1)).spec?.images?.[image]?.pullSecrets).toEqual([{ namespace: DEFAULT_DAEMON_CONFIG_NAMESPACE, name: copyName(ns, 'cred') }]));
    await updateWithRetry(nis, undefined, node1, (ni) => {
      const entry = ni.spec?.images?.[image];
      if (!entry) return undefined;
      return { ...ni, spec: { images: { ...ni.spec?.images, [image]: { ...entry, pullSecrets: [...(entry.pullSecrets ?? []), { namespace: 'kruise-daemon-config', name: 'cred-upstream', mode: 'batch' }] } } } };
    });
    await eventually(async () => expect((await nis.get(undefined, node1)).spec?.images?.[image]?.pullSecrets).toEqual([{ namespace: DEFAULT_DAEMON_CONFIG_NAMESPACE, name: copyName(ns, 'cred') }]), 30_000);
    await jobs.delete(ns, 'secrets');
  });
});
