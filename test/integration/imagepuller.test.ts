import { execFileSync } from 'node:child_process';
import { LABEL_FAKE_NODE_IMAGE } from '../../api/metadata-keys.js';
import type { ImageSpec, ImageTagSpec } from '../../api/types/nodeimage.js';
import { CriClient } from '../../daemon/cri/client.js';
import { SharedPulls } from '../../daemon/imagepuller/worker.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { RestClient } from '../../kube/rest.js';
import { updateWithRetry } from '../../kube/write.js';
import { BARE_NOT_FOUND, type FaultHandle, type FaultProxy } from '../proxy/fault-proxy.js';
import { registryDigest } from '../helpers/env.js';
import { nodeImages, privateContainerd, startDaemon, tagStatus, type InProcessDaemon } from '../helpers/daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, startProxy, kruise } from '../helpers/kube.js';
import { ThrottleProxy } from '../helpers/throttle.js';
import { BlobRefusingProxy } from '../helpers/blob-refusing-proxy.js';

const env = clusterEnv();
const rest = restClient();
const nis = nodeImages(rest);
const secrets = new Resource<KubeObject & { type?: string; data?: Record<string, string> }>(rest, core.secrets);
let ns = '';
let ctrd: ReturnType<typeof privateContainerd>;
let cri: CriClient;
let slow: ThrottleProxy;
let proxy: FaultProxy;
const running: InProcessDaemon[] = [];
const created: string[] = [];

beforeAll(async () => {
  ns = await createNamespace(rest, 'puller');
  ctrd = privateContainerd('puller');
  cri = new CriClient(ctrd.socket);
  // 52 MB at 8 MB/s: a big pull lasts several seconds, long enough to act on while it runs.
  slow = await ThrottleProxy.start(env.registryOpen, 8_000_000);
  proxy = await startProxy();
});
afterAll(async () => {
  for (const d of running) await d.stop();
  for (const n of created) await nis.delete(undefined, n).catch(() => undefined);
  await proxy.stop();
  await slow.stop();
  cri.close();
  ctrd.ctl('down');
  await deleteNamespace(rest, ns);
});

let seq = 0;
function node(label: string): string {
  return `${ns}-${label}-${seq++}`;
}

function daemon(name: string, over: Parameters<typeof startDaemon>[3] = {}, viaProxy = false): InProcessDaemon {
  const d = startDaemon(name, viaProxy ? restClient(proxy.url) : rest, ctrd.socket, { secretNamespace: ns, ...over });
  running.push(d);
  return d;
}

function tag(t: string, over: Partial<ImageTagSpec> = {}): ImageTagSpec {
  return {
    tag: t,
    version: 0,
    createdAt: new Date().toISOString(),
    imagePullPolicy: 'Always',
    pullPolicy: { timeoutSeconds: 60, backoffLimit: 1, ttlSecondsAfterFinished: 300 },
    ...over,
  };
}

async function createNodeImage(name: string, images: Record<string, ImageSpec>): Promise<void> {
  // No Node carries these names: the label keeps the NodeImage controller from removing them.
  await nis.create({ metadata: { name, labels: { [LABEL_FAKE_NODE_IMAGE]: 'true' } }, spec: { images } });
  created.push(name);
}

async function setImages(name: string, images: Record<string, ImageSpec>): Promise<void> {
  const cur = await nis.get(undefined, name);
  await nis.update({ ...cur, spec: { images } });
}

async function final(name: string, image: string, t: string, timeoutMs = 60_000): Promise<NonNullable<ReturnType<typeof tagStatus>>> {
  return eventually(async () => {
    const s = tagStatus(await nis.get(undefined, name), image, t);
    if (!s || (s.phase !== 'Succeeded' && s.phase !== 'Failed')) throw new Error(`${image}:${t} not finished: ${JSON.stringify(s)}`);
    return s;
  }, timeoutMs);
}

async function removeImage(ref: string): Promise<void> {
  await cri.image('RemoveImage', { image: { image: ref } });
}

function pulls(ref: string): number {
  return ctrd.pullLog().filter((l) => l.includes(`PullImage \\"${ref}\\"`)).length;
}

const open = (): string => env.registryOpen;
const many = (n: number): string => `${open()}/many-${String(n).padStart(3, '0')}`;

async function eventsFor(name: string, namespace = 'default'): Promise<Array<{ reason?: string; message?: string; type?: string; source?: { component?: string; host?: string } }>> {
  const res = new Resource<KubeObject & { reason?: string; message?: string; type?: string; source?: { component?: string; host?: string } }>(rest, core.events);
  return (await res.list(namespace, { fieldSelector: `involvedObject.name=${name}` })).items;
}

describe('image puller (real daemon code, real containerd, real API server)', () => {
  it('stands back while another daemon writes its NodeImage status (OpenKruise\'s kruise-daemon), and resumes when it stops', async () => {
    const name = node('standback');
    const d = daemon(name, { conflictQuietMs: 4_000 });
    await eventually(() => expect(d.daemon.synced()).toBe(true));
    await createNodeImage(name, { [many(32)]: { tags: [tag('1.0')] } });
    await final(name, many(32), '1.0');
    expect(d.daemon.standingBack()).toBeUndefined();
    // OpenKruise's daemon calls itself kruise-daemon: the API server names its writes after it.
    const upstream = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0, userAgent: 'kruise-daemon/kruise-daemon-imagepuller' });
    try {
      await updateWithRetry(nodeImages(upstream), undefined, name, (ni) => ({ ...ni, status: { ...ni.status, desired: ni.status?.desired ?? 0, firstSyncStatus: { syncAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), status: 'Succeeded' as const } } }), { status: true });
    } finally {
      await upstream.close();
    }
    await eventually(() => expect(d.daemon.standingBack()).toContain('kruise-daemon also writes NodeImage'));
    await eventually(async () => expect((await eventsFor(name)).some((e) => e.reason === 'OpenKruiseConflict' && e.type === 'Warning')).toBe(true));
    // Meanwhile nothing new starts, and nothing is written.
    await removeImage(`${many(33)}:1.0`);
    const cur = await nis.get(undefined, name);
    await setImages(name, { ...cur.spec?.images, [many(33)]: { tags: [tag('1.0')] } });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(tagStatus(await nis.get(undefined, name), many(33), '1.0')).toBeUndefined();
    // Quiet for conflictQuietMs: the puller carries on.
    const s = await final(name, many(33), '1.0', 30_000);
    expect(s.phase).toBe('Succeeded');
    expect(d.daemon.standingBack()).toBeUndefined();
  });

  it('waits quietly for a NodeImage that does not exist yet, then pulls what it asks for', async () => {
    const name = node('basic');
    const d = daemon(name);
    await eventually(() => expect(d.daemon.synced()).toBe(true));
    await removeImage(`${many(31)}:1.0`);
    await createNodeImage(name, { [many(31)]: { tags: [tag('1.0')] } });
    const s = await final(name, many(31), '1.0');
    expect(s).toMatchObject({ phase: 'Succeeded', progress: 100, version: 0 });
    expect(s.imageID).toMatch(new RegExp(`^${many(31)}@sha256:[a-f0-9]{64}$`));
    expect(s.startTime).toBeDefined();
    expect(s.completionTime).toBeDefined();
    const ni = await nis.get(undefined, name);
    expect(ni.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0, pulling: 0, waiting: 0 });
    expect((await cri.image('ImageStatus', { image: { image: `${many(31)}:1.0` } })).image?.id).toBeTruthy();
    await eventually(async () => {
      const evs = await eventsFor(name);
      expect(evs.find((e) => e.reason === 'PullImageSucceed')).toMatchObject({ type: 'Normal', source: { component: 'kruise-daemon-imagepuller', host: name } });
    });
    // One tag, one quick pull: its status is written at most three times.
    const written = await d.daemon.metrics.statusWrites.get();
    const n = written.values.filter((v) => v.labels['result'] === 'written').reduce((a, v) => a + v.value, 0);
    expect(n).toBeGreaterThanOrEqual(1);
    expect(n).toBeLessThanOrEqual(3);
  });

  it('never runs more pulls than --max-workers-for-pull-image, queueing the rest as Waiting', async () => {
    const name = node('workers');
    const d = daemon(name, { maxWorkers: 2 });
    const images: Record<string, ImageSpec> = {};
    for (let i = 32; i < 38; i++) {
      const ref = `${slow.address}/many-${String(i).padStart(3, '0')}`;
      await removeImage(`${ref}:1.0`);
      images[ref] = { tags: [tag('1.0')] };
    }
    await createNodeImage(name, images);
    let maxPulling = 0;
    let sawWaiting = false;
    await eventually(
      async () => {
        const snap = d.daemon.puller.snapshot();
        maxPulling = Math.max(maxPulling, snap.filter((s) => s.phase === 'Pulling').length);
        sawWaiting ||= snap.some((s) => s.phase === 'Waiting');
        const ni = await nis.get(undefined, name);
        expect(ni.status?.succeeded).toBe(6);
      },
      60_000,
      20,
    );
    expect(maxPulling).toBe(2);
    expect(sawWaiting).toBe(true);
  });

  it('IfNotPresent succeeds at once for an image already there; Always pulls and can fail', async () => {
    const name = node('policy');
    daemon(name);
    // An image the node has under a name whose registry does not exist: only a real pull would fail.
    await cri.pullImage(`${many(38)}:1.0`, undefined, undefined);
    execFileSync('ctr', ['--address', ctrd.socket, '-n', 'k8s.io', 'images', 'tag', '--force', `${many(38)}:1.0`, '127.0.0.1:1/fake/img:1.0']);
    const before = pulls('127.0.0.1:1/fake/img:1.0');
    await createNodeImage(name, { '127.0.0.1:1/fake/img': { tags: [tag('1.0', { imagePullPolicy: 'IfNotPresent' })] } });
    expect(await final(name, '127.0.0.1:1/fake/img', '1.0')).toMatchObject({ phase: 'Succeeded', progress: 100 });
    expect(pulls('127.0.0.1:1/fake/img:1.0')).toBe(before);
    await setImages(name, { '127.0.0.1:1/fake/img': { tags: [tag('1.0', { version: 1, imagePullPolicy: 'Always', pullPolicy: { timeoutSeconds: 10, backoffLimit: 0, ttlSecondsAfterFinished: 300 } })] } });
    const s = await eventually(async () => {
      const t = await final(name, '127.0.0.1:1/fake/img', '1.0');
      if (t.version !== 1) throw new Error('old version');
      return t;
    });
    expect(s.phase).toBe('Failed');
    expect(s.message).toMatch(/^registry unreachable: .*connection refused/);
  });

  it('applies a lowered backoffLimit to the attempts not yet started (kruise#2221)', async () => {
    const name = node('lowered');
    // Retries 2 s, 4 s, 8 s, ... after each failure: the edit lands before the second attempt, and
    // 20 retries would take minutes.
    daemon(name, { pullBackoffBaseMs: 2000 });
    const ref = '127.0.0.1:1/lowered/img';
    const before = pulls(`${ref}:1.0`);
    await createNodeImage(name, { [ref]: { tags: [tag('1.0', { imagePullPolicy: 'Always', pullPolicy: { timeoutSeconds: 10, backoffLimit: 20, ttlSecondsAfterFinished: 300 } })] } });
    await eventually(async () => expect(tagStatus(await nis.get(undefined, name), ref, '1.0')?.message).toMatch(/^attempt 1 of 21 failed/), 30_000, 50);
    await updateWithRetry(nis, undefined, name, (cur) => {
      const t = cur.spec?.images?.[ref]?.tags?.[0];
      if (!t?.pullPolicy) throw new Error('no tag');
      t.pullPolicy.backoffLimit = 2;
      return cur;
    });
    const s = await final(name, ref, '1.0', 30_000);
    expect(s.phase).toBe('Failed');
    expect(s.message).toMatch(/^registry unreachable: /);
    expect(pulls(`${ref}:1.0`) - before).toBe(3);
  });

  it('pulls again when the tag version goes up', async () => {
    const name = node('version');
    daemon(name);
    await createNodeImage(name, { [many(40)]: { tags: [tag('1.0')] } });
    const first = await final(name, many(40), '1.0');
    const before = pulls(`${many(40)}:1.0`);
    await setImages(name, { [many(40)]: { tags: [tag('1.0', { version: 1 })] } });
    const second = await eventually(async () => {
      const s = await final(name, many(40), '1.0');
      if (s.version !== 1) throw new Error('still version 0');
      return s;
    });
    expect(second.phase).toBe('Succeeded');
    expect(Date.parse(second.completionTime ?? '')).toBeGreaterThanOrEqual(Date.parse(first.completionTime ?? ''));
    expect(pulls(`${many(40)}:1.0`)).toBe(before + 1);
  });

  it('pulls a tag that is a digest by digest', async () => {
    const name = node('digest');
    daemon(name);
    const digest = await registryDigest(open(), 'many-039', '1.0');
    await removeImage(`${many(39)}@${digest}`);
    await createNodeImage(name, { [many(39)]: { tags: [tag(digest)] } });
    const s = await final(name, many(39), digest);
    expect(s.phase).toBe('Succeeded');
    expect(pulls(`${many(39)}@${digest}`)).toBeGreaterThan(0);
    expect((await cri.image('ImageStatus', { image: { image: `${many(39)}@${digest}` } })).image?.repo_digests).toContain(`${many(39)}@${digest}`);
  });

  it('reports byte progress strictly between 0 and 100 while a large image downloads, and stops a pull whose tag is removed', async () => {
    const name = node('progress');
    daemon(name);
    const big = `${slow.address}/big`;
    await removeImage(`${big}:1.0`);
    await createNodeImage(name, { [big]: { tags: [tag('1.0')] } });
    const seen = new Set<number>();
    await eventually(
      async () => {
        const p = tagStatus(await nis.get(undefined, name), big, '1.0')?.progress ?? 0;
        seen.add(p);
        expect([...seen].filter((x) => x > 0 && x < 100).length).toBeGreaterThanOrEqual(2);
      },
      30_000,
      200,
    );
    await setImages(name, {});
    await eventually(async () => {
      const ni = await nis.get(undefined, name);
      expect(ni.status?.imageStatuses).toBeUndefined();
      expect(ni.status?.desired).toBe(0);
      expect((await cri.ingests()).filter((i) => i.ref.startsWith('layer-'))).toEqual([]);
    }, 20_000);
    expect((await cri.image('ImageStatus', { image: { image: `${big}:1.0` } })).image).toBeNull();
    // Stopping a pull because its tag went away is not a failure (upstream reports one).
    expect((await eventsFor(name)).filter((e) => e.reason === 'PullImageFailed')).toEqual([]);
  });

  describe('credentials', () => {
    const priv = (): string => `${env.registryAuth}/private/busybox`;
    async function dockerSecret(secretName: string, namespace: string, auths: unknown, raw?: string): Promise<void> {
      const json = raw ?? JSON.stringify({ auths });
      await secrets.create({
        metadata: { name: secretName, namespace },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': Buffer.from(json).toString('base64') },
      });
    }

    it('pulls a private image with a good secret from the daemon namespace', async () => {
      const name = node('secret-good');
      daemon(name);
      await removeImage(`${priv()}:1.0`);
      await dockerSecret('good', ns, { [`http://${env.registryAuth}`]: { username: env.registryUser, password: env.registryPassword } });
      await createNodeImage(name, { [priv()]: { pullSecrets: [{ namespace: ns, name: 'good' }], tags: [tag('1.0')] } });
      expect(await final(name, priv(), '1.0')).toMatchObject({ phase: 'Succeeded' });
    });

    it('fails clearly with a wrong password, a malformed secret, or a secret outside its namespace', async () => {
      await removeImage(`${priv()}:1.0`);
      await dockerSecret('wrong', ns, { [env.registryAuth]: { username: env.registryUser, password: 'not-the-password' } });
      // The API server checks that .dockerconfigjson is JSON; what is inside is the daemon's problem.
      await dockerSecret('malformed', ns, undefined, JSON.stringify({ auths: { [env.registryAuth]: { auth: Buffer.from('no-colon-here').toString('base64') } } }));
      const cases: Array<[string, { namespace: string; name: string }, RegExp]> = [
        ['wrong', { namespace: ns, name: 'wrong' }, /^the registry refused the credentials: .*401 Unauthorized/],
        ['malformed', { namespace: ns, name: 'malformed' }, new RegExp(`secret ${ns}/malformed: `)],
        ['outside', { namespace: 'default', name: 'good' }, new RegExp(`pull secret default/good is outside the daemon's secret namespace ${ns}`)],
      ];
      for (const [label, ref, why] of cases) {
        const name = node(`secret-${label}`);
        daemon(name);
        await createNodeImage(name, { [priv()]: { pullSecrets: [ref], tags: [tag('1.0', { pullPolicy: { timeoutSeconds: 20, backoffLimit: 0, ttlSecondsAfterFinished: 300 } })] } });
        const s = await final(name, priv(), '1.0');
        expect(s.phase).toBe('Failed');
        expect(s.message).toMatch(why);
        expect(s.message).not.toContain('not-the-password');
      }
    });
  });

  it('times out each attempt, retries, then fails with the message, telling the NodeImage and the owning job', async () => {
    const name = node('timeout');
    daemon(name);
    const jobs = new Resource<KubeObject & { spec?: unknown }>(rest, kruise.imagePullJobs);
    const stalled = `${slow.address}/big`;
    // A real job, so events reach a real object; parallelism 0 keeps the manager from writing tags of
    // its own: it only follows the one written below for it, whose policy is the job's (the manager
    // would otherwise bring the tag to what its only owner asks).
    const job = await jobs.create({
      metadata: { name: 'owner', namespace: ns },
      spec: { image: `${stalled}:1.0`, parallelism: 0, selector: { names: [name] }, pullPolicy: { timeoutSeconds: 1, backoffLimit: 1 }, completionPolicy: { type: 'Always' } },
    });
    await removeImage(`${stalled}:1.0`);
    slow.pause();
    try {
      const t0 = Date.now();
      await createNodeImage(name, {
        [stalled]: {
          tags: [
            tag('1.0', {
              pullPolicy: { timeoutSeconds: 1, backoffLimit: 1, ttlSecondsAfterFinished: 300 },
              ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', name: 'owner', namespace: ns, uid: job.metadata?.uid ?? '' }],
            }),
          ],
        },
      });
      const s = await final(name, stalled, '1.0', 30_000);
      expect(s.phase).toBe('Failed');
      expect(s.message).toMatch(/^pull attempt timed out after 1s/);
      // Two attempts of 1 s and a backoff between them.
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
      await eventually(async () => {
        expect((await eventsFor(name)).find((e) => e.reason === 'PullImageFailed')?.type).toBe('Warning');
        expect((await eventsFor('owner', ns)).find((e) => e.reason === 'PullImageFailed')?.message).toContain('timed out');
      });
    } finally {
      slow.resume();
    }
  });

  it('bounds the whole tag by activeDeadlineSeconds', async () => {
    const name = node('deadline');
    daemon(name);
    const stalled = `${slow.address}/big`;
    await removeImage(`${stalled}:1.0`);
    slow.pause();
    try {
      await createNodeImage(name, { [stalled]: { tags: [tag('1.0', { pullPolicy: { timeoutSeconds: 60, backoffLimit: 3, activeDeadlineSeconds: 2, ttlSecondsAfterFinished: 300 } })] } });
      const s = await final(name, stalled, '1.0', 20_000);
      expect(s).toMatchObject({ phase: 'Failed', message: 'pulling exceeds the activeDeadlineSeconds' });
    } finally {
      slow.resume();
    }
  });

  it('waits for disk space above the high watermark (condition, event), fails only at the deadline, and pulls once there is room', async () => {
    const name = node('disk');
    const full = daemon(name, { imageFsHighWatermark: 1 });
    await removeImage(`${many(41)}:1.0`);
    await createNodeImage(name, {
      [many(41)]: { tags: [tag('1.0')] },
      [many(45)]: { tags: [tag('1.0', { pullPolicy: { timeoutSeconds: 60, backoffLimit: 1, activeDeadlineSeconds: 4, ttlSecondsAfterFinished: 300 } })] },
    });
    const waiting = await eventually(async () => {
      const ni = await nis.get(undefined, name);
      expect(tagStatus(ni, many(41), '1.0')?.message).toMatch(/^waiting for disk space: image filesystem .* is \d+% full, above the --image-fs-high-watermark of 1%/);
      expect(ni.status?.conditions?.find((c) => c.type === 'ImageFilesystemFull')).toMatchObject({ status: 'True', reason: 'AboveHighWatermark' });
      return ni;
    }, 20_000);
    expect(tagStatus(waiting, many(41), '1.0')?.phase).toBe('Pulling');
    await eventually(async () => expect((await eventsFor(name)).filter((e) => e.reason === 'ImageFilesystemFull')).toHaveLength(1));
    // The tag with a deadline fails at it, saying what it waited for; the other goes on waiting.
    expect(await final(name, many(45), '1.0', 20_000)).toMatchObject({ phase: 'Failed', message: expect.stringMatching(/^pulling exceeds the activeDeadlineSeconds: image filesystem .* full/) });
    expect(tagStatus(await nis.get(undefined, name), many(41), '1.0')?.phase).toBe('Pulling');
    // Room again (here: a daemon with the default watermark takes over): the waiting tag is pulled.
    await full.stop();
    running.splice(running.indexOf(full), 1);
    daemon(name);
    expect(await final(name, many(41), '1.0')).toMatchObject({ phase: 'Succeeded' });
    await eventually(async () => {
      expect((await nis.get(undefined, name)).status?.conditions?.find((c) => c.type === 'ImageFilesystemFull')).toMatchObject({ status: 'False', reason: 'BelowHighWatermark' });
      expect((await eventsFor(name)).filter((e) => e.reason === 'ImageFilesystemFreed')).toHaveLength(1);
    });
  });

  it('waits for a container runtime that is down longer than every retry, IfNotPresent and Always alike', async () => {
    const name = node('ctrd-down');
    daemon(name);
    await removeImage(`${many(46)}:1.0`);
    await removeImage(`${many(47)}:1.0`);
    ctrd.ctl('stop');
    try {
      // backoffLimit 1 and a 200 ms backoff: before, both failed within a second.
      await createNodeImage(name, {
        [many(46)]: { tags: [tag('1.0', { imagePullPolicy: 'IfNotPresent' })] },
        [many(47)]: { tags: [tag('1.0')] },
      });
      await eventually(async () => {
        const ni = await nis.get(undefined, name);
        for (const ref of [many(46), many(47)]) expect(tagStatus(ni, ref, '1.0')).toMatchObject({ phase: 'Pulling', message: expect.stringMatching(/^waiting for the container runtime: /) });
      }, 20_000);
      await new Promise((r) => setTimeout(r, 5_000));
      const ni = await nis.get(undefined, name);
      for (const ref of [many(46), many(47)]) expect(tagStatus(ni, ref, '1.0')?.phase).toBe('Pulling');
    } finally {
      ctrd.ctl('start');
    }
    expect(await final(name, many(46), '1.0')).toMatchObject({ phase: 'Succeeded' });
    expect(await final(name, many(47), '1.0')).toMatchObject({ phase: 'Succeeded' });
  });

  it("retries a blob a CDN refused with 403, failing at once only on the registry's answer for the manifest", async () => {
    const name = node('cdn');
    daemon(name);
    const cdn = await BlobRefusingProxy.start(env.registryOpen);
    try {
      const ref = `${cdn.address}/many-048`;
      await removeImage(`${ref}:1.0`);
      cdn.refuse = 1;
      await createNodeImage(name, { [ref]: { tags: [tag('1.0', { pullPolicy: { timeoutSeconds: 60, backoffLimit: 2, ttlSecondsAfterFinished: 300 } })] }, [`${cdn.address}/many-049`]: { tags: [tag('nope')] } });
      expect(await final(name, ref, '1.0')).toMatchObject({ phase: 'Succeeded' });
      expect(cdn.refused).toBe(1);
      // An unknown tag is the registry's word: no retry.
      expect(await final(name, `${cdn.address}/many-049`, 'nope')).toMatchObject({ phase: 'Failed', message: expect.stringMatching(/^image not found in the registry: /) });
    } finally {
      await cdn.stop();
    }
  });

  it('fails tags queued behind busy workers at their end (createdAt + activeDeadlineSeconds + 10 min) as the manager does, and no tag flips back', async () => {
    const name = node('queued');
    daemon(name, { maxWorkers: 1 });
    const refs = [0, 1, 2, 3].map((i) => `${slow.address}/many-${String(50 + i).padStart(3, '0')}`);
    for (const r of refs) await removeImage(`${r}:1.0`);
    // Written 597 s ago with a 30 s deadline: the tags end 33 s from now, by the manager's rule and
    // the daemon's alike (the manager's "not responded" rule, at 600 s, finds the daemon's answers).
    // The registry holds every pull: the first fails at its own 30 s, the second then pulls, and it
    // and the two still queued reach their end together.
    const createdAt = new Date(Date.now() - 597_000).toISOString();
    const pullPolicy = { timeoutSeconds: 60, backoffLimit: 1, activeDeadlineSeconds: 30, ttlSecondsAfterFinished: 300 };
    const phases = new Map<string, string[]>();
    const ac = new AbortController();
    const list = await nis.list(undefined, { limit: 1 });
    const watching = nis
      .watch(undefined, { resourceVersion: list.metadata?.resourceVersion, fieldSelector: `metadata.name=${name}` }, (ev) => {
        for (const r of refs) {
          const p = tagStatus(ev.object, r, '1.0')?.phase;
          const seen = phases.get(r) ?? [];
          if (p !== undefined && seen[seen.length - 1] !== p) phases.set(r, [...seen, p]);
        }
      }, ac.signal)
      .catch(() => undefined);
    slow.pause();
    try {
      await createNodeImage(name, Object.fromEntries(refs.map((r) => [r, { tags: [tag('1.0', { createdAt, pullPolicy })] }])));
      for (const r of refs) expect(await final(name, r, '1.0', 60_000)).toMatchObject({ phase: 'Failed', message: 'pulling exceeds the activeDeadlineSeconds' });
      // Long enough for a daemon that rebuilt Waiting from memory to have written it back.
      await new Promise((r) => setTimeout(r, 4_000));
    } finally {
      slow.resume();
      ac.abort();
      await watching;
    }
    for (const r of refs) {
      const seen = phases.get(r) ?? [];
      expect({ ref: r, after: seen.slice(seen.indexOf('Failed')) }).toEqual({ ref: r, after: ['Failed'] });
    }
    const ni = await nis.get(undefined, name);
    expect(ni.status).toMatchObject({ failed: 4, waiting: 0, pulling: 0 });
  });

  it('retries a pull broken by a containerd restart', async () => {
    const name = node('ctrd-restart');
    daemon(name);
    const big = `${slow.address}/big`;
    await removeImage(`${big}:1.0`);
    await createNodeImage(name, { [big]: { tags: [tag('1.0', { pullPolicy: { timeoutSeconds: 60, backoffLimit: 3, ttlSecondsAfterFinished: 300 } })] } });
    await eventually(async () => expect(tagStatus(await nis.get(undefined, name), big, '1.0')?.phase).toBe('Pulling'), 20_000, 50);
    await new Promise((r) => setTimeout(r, 1000));
    ctrd.ctl('restart');
    expect(await final(name, big, '1.0', 90_000)).toMatchObject({ phase: 'Succeeded', progress: 100 });
  });

  it('keeps pulling through an API server outage and writes the result when it is back', async () => {
    const name = node('outage');
    daemon(name, {}, true);
    const big = `${slow.address}/big`;
    await removeImage(`${big}:1.0`);
    // Held until the API server is gone, so the whole download happens during the outage.
    slow.pause();
    try {
      await createNodeImage(name, { [big]: { tags: [tag('1.0')] } });
      await eventually(async () => expect(tagStatus(await nis.get(undefined, name), big, '1.0')?.phase).toBe('Pulling'), 20_000, 50);
      proxy.refuseConnections();
    } finally {
      slow.resume();
    }
    try {
      await eventually(async () => expect((await cri.image('ImageStatus', { image: { image: `${big}:1.0` } })).image).not.toBeNull(), 60_000, 200);
      expect(tagStatus(await nis.get(undefined, name), big, '1.0')?.phase).toBe('Pulling');
    } finally {
      proxy.acceptConnections();
    }
    expect(await final(name, big, '1.0', 60_000)).toMatchObject({ phase: 'Succeeded' });
  });

  it("writes a result whose write met a conflict and then a bare 404 (a restarting server's answer for custom resources), once the server serves it again", async () => {
    const name = node('bare404');
    daemon(name, {}, true);
    // Through the paused registry proxy: the pull waits until the faults are in place, so they
    // meet the write of its result.
    const ref = `${slow.address}/many-043`;
    await removeImage(`${ref}:1.0`);
    slow.pause();
    const faults: FaultHandle[] = [];
    try {
      await createNodeImage(name, { [ref]: { tags: [tag('1.0')] } });
      await eventually(async () => expect(tagStatus(await nis.get(undefined, name), ref, '1.0')?.phase).toBe('Pulling'), 20_000, 50);
      const status = new RegExp(`/nodeimages/${name}/status$`);
      const object = new RegExp(`/nodeimages/${name}$`);
      faults.push(proxy.failNext({ status: 409, times: Infinity, match: { method: 'PUT', path: status } }));
      faults.push(proxy.failNext({ ...BARE_NOT_FOUND, times: Infinity, match: { method: 'GET', watch: false, path: object } }));
      const reReads = proxy.count({ method: 'GET', pathRegex: object, status: 404 });
      slow.resume();
      await eventually(async () => expect((await cri.image('ImageStatus', { image: { image: `${ref}:1.0` } })).image).not.toBeNull(), 30_000, 100);
      // The result's write: 409, then the re-read's bare 404.
      await eventually(() => expect(proxy.count({ method: 'GET', pathRegex: object, status: 404 })).toBeGreaterThan(reReads), 10_000, 50);
      expect(tagStatus(await nis.get(undefined, name), ref, '1.0')?.phase).toBe('Pulling');
    } finally {
      slow.resume();
      for (const f of faults) f.clear();
    }
    expect(await final(name, ref, '1.0', 30_000)).toMatchObject({ phase: 'Succeeded' });
  });

  it('joins identical pulls in flight into one runtime call', async () => {
    const shared = new SharedPulls(cri);
    const ref = `${many(42)}:1.0`;
    await removeImage(ref);
    const before = pulls(ref);
    const sandbox = { labels: {}, annotations: {} };
    const [a, b] = await Promise.all([
      shared.pull(ref, undefined, sandbox, 30_000, new AbortController().signal),
      shared.pull(ref, undefined, sandbox, 30_000, new AbortController().signal),
    ]);
    expect(a).toBe(b);
    expect(pulls(ref) - before).toBe(1);
  });
});
