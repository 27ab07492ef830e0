import type { Pod } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import { CriClient } from '../../daemon/cri/client.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { copyName } from '../../manager/imagepulljob/secrets.js';
import { nodeImages, tagStatus } from '../helpers/daemon.js';
import { registryDigest } from '../helpers/env.js';
import { createFakeNodeImage, FakeDaemon } from '../helpers/fake-daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, kruise } from '../helpers/kube.js';

// End to end: the shared kruise-manager and the real kruise-daemon of each of the cluster's two
// kubelet nodes, pulling into that node's own containerd.
const env = clusterEnv();
const rest = restClient();
const nis = nodeImages(rest);
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
const pods = new Resource<Pod & KubeObject>(rest, core.pods);
const secrets = new Resource<KubeObject & { type?: string; data?: Record<string, string> }>(rest, core.secrets);
const cris = new Map(env.nodes.map((n) => [n.name, new CriClient(n.criSocket)]));
const nodeNames = env.nodes.map((n) => n.name);
let ns = '';

beforeAll(async () => {
  ns = await createNamespace(rest, 'e2e');
});
afterAll(async () => {
  for (const c of cris.values()) c.close();
  await deleteNamespace(rest, ns);
});

function cri(node: string): CriClient {
  const c = cris.get(node);
  if (!c) throw new Error(`no CRI client for ${node}`);
  return c;
}

async function present(node: string, ref: string): Promise<boolean> {
  return !!(await cri(node).image('ImageStatus', { image: { image: ref } })).image?.id;
}

async function removeEverywhere(ref: string): Promise<void> {
  for (const n of nodeNames) {
    await cri(n).image('RemoveImage', { image: { image: ref } });
    expect(await present(n, ref)).toBe(false);
  }
}

async function completedJob(name: string, timeoutMs = 90_000): Promise<ImagePullJob> {
  return eventually(async () => {
    const j = await jobs.get(ns, name);
    if (!j.status?.completionTime) throw new Error(`job ${name} not completed: ${JSON.stringify(j.status)}`);
    return j;
  }, timeoutMs, 250);
}

describe('ImagePullJob end to end on the local cluster\'s real nodes', () => {
  it('completes with the image really present in each node\'s containerd', async () => {
    const ref = `${env.registryOpen}/many-060:1.0`;
    await removeEverywhere(ref);
    await jobs.create({ metadata: { name: 'e2e', namespace: ns }, spec: { image: ref, parallelism: 2, imagePullPolicy: 'Always', completionPolicy: { type: 'Always' }, selector: { names: nodeNames } } });
    const j = await completedJob('e2e');
    expect(j.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0, active: 0, message: 'job has completed' });
    for (const n of nodeNames) {
      expect(await present(n, ref)).toBe(true);
      expect(tagStatus(await nis.get(undefined, n), `${env.registryOpen}/many-060`, '1.0')).toMatchObject({ phase: 'Succeeded', imageID: expect.stringMatching(/@sha256:[0-9a-f]{64}$/) });
    }
  });

  it('pulls a private image with the job\'s pull secret, which only reaches the daemons as a copy in their namespace', async () => {
    const ref = `${env.registryAuth}/private/busybox:1.0`;
    await removeEverywhere(ref);
    const config = { auths: { [env.registryAuth]: { username: env.registryUser, password: env.registryPassword } } };
    await secrets.create({ metadata: { name: 'private-cred', namespace: ns }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') } });
    // The references live only while the job runs (finished jobs release their copies), so they
    // are recorded as they appear.
    const seen = new Map<string, unknown>();
    let watching = true;
    const recorder = (async () => {
      while (watching) {
        for (const n of nodeNames) {
          const refs = (await nis.get(undefined, n)).spec?.images?.[`${env.registryAuth}/private/busybox`]?.pullSecrets;
          if (refs && !seen.has(n)) seen.set(n, refs);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await jobs.create({ metadata: { name: 'private', namespace: ns }, spec: { image: ref, pullSecrets: ['private-cred'], parallelism: 2, completionPolicy: { type: 'Always' }, selector: { names: nodeNames } } });
    const j = await completedJob('private');
    watching = false;
    await recorder;
    expect(j.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0 });
    for (const n of nodeNames) {
      expect(await present(n, ref)).toBe(true);
      expect(seen.get(n)).toEqual([{ namespace: 'kruise-ts-daemon-config', name: copyName(ns, 'private-cred') }]);
    }
    // The job finished: its copy is released.
    await eventually(async () => expect(await secrets.get('kruise-ts-daemon-config', copyName(ns, 'private-cred')).then(() => 'present', () => 'gone')).toBe('gone'));
  });

  it('pulls a digest reference by digest', async () => {
    const digest = await registryDigest(env.registryOpen, 'many-061', '1.0');
    const ref = `${env.registryOpen}/many-061@${digest}`;
    await removeEverywhere(ref);
    await jobs.create({ metadata: { name: 'digest', namespace: ns }, spec: { image: ref, completionPolicy: { type: 'Always' }, selector: { names: [nodeNames[0] ?? ''] } } });
    const j = await completedJob('digest');
    expect(j.status).toMatchObject({ desired: 1, succeeded: 1 });
    expect(tagStatus(await nis.get(undefined, nodeNames[0] ?? ''), `${env.registryOpen}/many-061`, digest)?.phase).toBe('Succeeded');
    expect((await cri(nodeNames[0] ?? '').image('ImageStatus', { image: { image: ref } })).image?.repo_digests).toContain(ref);
  });

  it('pulls on the nodes of the pods a podSelector matches, and only there', async () => {
    const [first, second] = nodeNames;
    const ref = `${env.registryOpen}/many-062:1.0`;
    await removeEverywhere(ref);
    await pods.create({
      metadata: { name: 'web', namespace: ns, labels: { app: 'web' } },
      spec: {
        nodeName: first ?? '',
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image: `${env.registryOpen}/busybox:1.0`, imagePullPolicy: 'IfNotPresent', command: ['/bin/sleep', 'infinity'] }],
      },
    });
    await jobs.create({ metadata: { name: 'pods', namespace: ns }, spec: { image: ref, parallelism: 2, completionPolicy: { type: 'Always' }, podSelector: { matchLabels: { app: 'web' } } } });
    const j = await completedJob('pods');
    expect(j.status).toMatchObject({ desired: 1, succeeded: 1 });
    expect(await present(first ?? '', ref)).toBe(true);
    expect(await present(second ?? '', ref)).toBe(false);
    expect((await nis.get(undefined, second ?? '')).spec?.images?.[`${env.registryOpen}/many-062`]).toBeUndefined();
  });

  it('a Never job without selector pulls on every node, fake ones included; deleting it cleans every node', async () => {
    const fake = new FakeDaemon(rest, `${ns}-all`);
    await fake.synced();
    const fakeName = `${ns}-fake`;
    await createFakeNodeImage(rest, fakeName, fake);
    try {
      const ref = `${env.registryOpen}/many-063:1.0`;
      const img = `${env.registryOpen}/many-063`;
      await jobs.create({ metadata: { name: 'all', namespace: ns }, spec: { image: ref, parallelism: 100, completionPolicy: { type: 'Never' } } });
      await eventually(async () => {
        const all = (await nis.list(undefined)).items.filter((x) => !x.metadata?.deletionTimestamp).map((x) => x.metadata?.name ?? '');
        expect(all).toEqual(expect.arrayContaining([...nodeNames, fakeName]));
        const j = await jobs.get(ns, 'all');
        expect(j.status).toMatchObject({ desired: all.length });
        for (const n of [...nodeNames, fakeName]) expect(tagStatus(await nis.get(undefined, n), img, '1.0')?.phase).toBe('Succeeded');
      }, 60_000, 250);
      for (const n of nodeNames) expect(await present(n, ref)).toBe(true);
      expect((await jobs.get(ns, 'all')).status?.completionTime).toBeUndefined();
      await jobs.delete(ns, 'all');
      await eventually(async () => {
        for (const n of [...nodeNames, fakeName]) expect((await nis.get(undefined, n)).spec?.images?.[img]).toBeUndefined();
      }, 30_000);
    } finally {
      fake.stop();
      await nis.delete(undefined, fakeName).catch(() => undefined);
    }
  });
});
