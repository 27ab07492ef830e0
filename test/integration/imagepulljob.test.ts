import { readFileSync } from 'node:fs';
import type { ImageListPullJob } from '../../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { Informer } from '../../kube/informer.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { ApiError } from '../../kube/rest.js';
import { copyName } from '../../manager/imagepulljob/secrets.js';
import { auditEntries, auditSize, managerSpecWrites } from '../../hack/bench/audit.js';
import { nodeImages } from '../helpers/daemon.js';
import { createFakeNode, createFakeNodeImage, FakeDaemon } from '../helpers/fake-daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, kruise } from '../helpers/kube.js';
import { logEntries } from '../helpers/logs.js';
import { installation, scrape, sum, writes } from '../helpers/manager.js';
import { RefusingWebhook } from '../helpers/refusing-webhook.js';

// ImagePullJob and ImageListPullJob through the real API server and the shared kruise-manager, on
// NodeImages whose node has no kruise-daemon: a fake daemon answers their tags like the real one.
const env = clusterEnv();
const rest = restClient();
const nis = nodeImages(rest);
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
const lists = new Resource<ImageListPullJob>(rest, kruise.imageListPullJobs);
type Secret = KubeObject & { type?: string; data?: Record<string, string> };
const secrets = new Resource<Secret>(rest, core.secrets);
const nodes = new Resource<KubeObject>(rest, core.nodes);
const DAEMON_NS = 'kruise-ts-daemon-config';
let ns = '';
let daemon: FakeDaemon;
const createdNodes: string[] = [];

beforeAll(async () => {
  ns = await createNamespace(rest, 'jobs');
  daemon = new FakeDaemon(rest, ns);
  await daemon.synced();
});
afterAll(async () => {
  daemon.stop();
  for (const n of createdNodes) await nodes.delete(undefined, n).catch(() => undefined);
  for (const ni of (await nis.list(undefined)).items) {
    if (ni.metadata?.name?.startsWith(ns)) await nis.delete(undefined, ni.metadata.name).catch(() => undefined);
  }
  await deleteNamespace(rest, ns);
});

let seq = 0;
async function fakeNodes(n: number, labels: Record<string, string> = {}): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = `${ns}-n${seq++}`;
    await createFakeNodeImage(rest, name, daemon, labels);
    names.push(name);
  }
  return names;
}

/** `n` NodeImages named `<ns>-<prefix><i>`, created 50 at a time: their names. */
async function manyFakeNodeImages(prefix: string, n: number, labels: Record<string, string>): Promise<Set<string>> {
  const names = Array.from({ length: n }, (_, i) => `${ns}-${prefix}${i}`);
  for (let i = 0; i < n; i += 50) await Promise.all(names.slice(i, i + 50).map((name) => createFakeNodeImage(rest, name, daemon, labels)));
  return new Set(names);
}

const image = (i: number): string => `${env.registryOpen}/many-${String(i).padStart(3, '0')}:1.0`;
const key = (i: number): string => `${env.registryOpen}/many-${String(i).padStart(3, '0')}`;

async function createJob(name: string, spec: Partial<ImagePullJob['spec']>): Promise<ImagePullJob> {
  return jobs.create({ metadata: { name, namespace: ns }, spec: { image: image(1), completionPolicy: { type: 'Always' }, ...spec } });
}

async function waitJob(name: string, check: (j: ImagePullJob) => boolean, what: string, timeoutMs = 30_000): Promise<ImagePullJob> {
  return eventually(async () => {
    const j = await jobs.get(ns, name);
    if (!check(j)) throw new Error(`job ${name} not ${what}: ${JSON.stringify(j.status)}`);
    return j;
  }, timeoutMs);
}
const completed = (j: ImagePullJob): boolean => j.status?.completionTime !== undefined;

async function gone(res: Resource<KubeObject>, namespace: string | undefined, name: string, timeoutMs = 30_000): Promise<void> {
  await eventually(async () => {
    const err = await res.get(namespace, name).then(() => undefined, (e: unknown) => e);
    if (!(err && (err as { notFound?: boolean }).notFound)) throw new Error(`${name} still exists`);
  }, timeoutMs);
}

/** Owners ("name") of image:tag on each node, as stored. */
async function ownersOn(names: string[], img: string, tag = '1.0'): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const n of names) {
    const ni = await nis.get(undefined, n);
    out[n] = (ni.spec?.images?.[img]?.tags.find((t) => t.tag === tag)?.ownerReferences ?? []).map((o) => o.name ?? '').sort();
  }
  return out;
}

async function eventsOf(name: string): Promise<Array<{ reason?: string; message?: string; type?: string }>> {
  const ev = new Resource<KubeObject & { reason?: string; message?: string; type?: string }>(rest, core.events);
  return (await ev.list(ns, { fieldSelector: `involvedObject.name=${name}` })).items;
}

/** Watches the NodeImages and records, at every event, how many nodes run a round of the job's tag. */
function watchActive(uid: string, img: string): { max: () => number; stop: () => void } {
  const inf = new Informer<NodeImage>(nis, { labelSelector: `kruise-ts.test/fake-daemon=${ns}` });
  const ac = new AbortController();
  let max = 0;
  const count = (): void => {
    let active = 0;
    for (const ni of inf.list()) {
      const t = ni.spec?.images?.[img]?.tags.find((x) => x.tag === '1.0' && (x.ownerReferences ?? []).some((o) => o.uid === uid));
      if (!t) continue;
      const s = ni.status?.imageStatuses?.[img]?.tags.find((x) => x.tag === '1.0');
      if (!s || (s.version ?? 0) !== (t.version ?? 0) || (s.phase !== 'Succeeded' && s.phase !== 'Failed')) active++;
    }
    max = Math.max(max, active);
  };
  inf.on({ add: count, update: count, delete: count });
  void inf.run(ac.signal);
  return { max: () => max, stop: () => ac.abort() };
}

describe('ImagePullJob on the real API server with the shared manager', () => {
  it('selects nodes by labels, including matchExpressions, and completes when they all answered', async () => {
    const [a, b] = await fakeNodes(2, { pool: `${ns}-lbl`, disk: 'ssd' });
    await fakeNodes(1, { pool: `${ns}-lbl`, disk: 'hdd' });
    await fakeNodes(1, { pool: 'other' });
    await createJob('labels', {
      image: image(2),
      parallelism: 10,
      selector: { matchLabels: { pool: `${ns}-lbl` }, matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] },
    });
    const j = await waitJob('labels', completed, 'completed');
    expect(j.status).toMatchObject({ desired: 2, active: 0, succeeded: 2, failed: 0, message: 'job has completed' });
    expect(Object.values(await ownersOn([a ?? '', b ?? ''], key(2)))).toEqual([['labels'], ['labels']]);
    // The finalizer goes in the write after the one that completes the job.
    await eventually(async () => expect((await jobs.get(ns, 'labels')).metadata?.finalizers ?? []).not.toContain('apps.kruise.io/deletion-protection'));
    await eventually(async () => expect((await eventsOf('labels')).map((e) => e.reason)).toContain('Completed'));
  });

  it('selects named nodes, reports node failures, and names nodes that do not exist or went away (upstream drops them silently)', async () => {
    const [a, b, c] = await fakeNodes(3);
    const leaving = `${ns}-node-leaving`;
    createdNodes.push(leaving);
    await createFakeNode(rest, leaving, daemon.labels);
    await eventually(() => nis.get(undefined, leaving), 20_000);
    // The fake daemon never answers on the leaving node: only its deletion ends its part.
    daemon.behaviour = (node) => (node === b ? { phase: 'Failed', message: 'manifest unknown' } : node === leaving ? { phase: 'Pulling' } : { phase: 'Succeeded' });
    await createJob('names', { image: image(3), parallelism: 5, selector: { names: [a ?? '', b ?? '', `${ns}-missing`, leaving] } });
    await new Promise((r) => setTimeout(r, 600));
    await nodes.delete(undefined, leaving);
    // A named node may still be joining: it counts as failed after the minute an empty job waits.
    const j = await waitJob('names', completed, 'completed', 120_000);
    daemon.behaviour = () => ({ phase: 'Succeeded' });
    const missing = [`${ns}-missing`, leaving].sort();
    expect(j.status).toMatchObject({ desired: 4, succeeded: 1, failed: 3, failedNodes: [b, ...missing].sort(), message: `job has completed; no such node: ${missing.join(', ')}` });
    expect((await nis.get(undefined, c ?? '')).spec?.images?.[key(3)]).toBeUndefined();
    // Events are written after the status that completes the job, not with it.
    await eventually(async () => {
      const events = (await new Resource<KubeObject & { reason?: string; message?: string }>(rest, core.events).list(ns, { fieldSelector: 'involvedObject.name=names' })).items;
      expect(events.filter((e) => e.reason === 'NodeNotFound').map((e) => e.message).sort()).toEqual(missing.map((n) => `node ${n} named in spec.selector.names does not exist (it has no NodeImage): counted as failed`));
    }, 10_000);
  });

  it('keeps at most `parallelism` nodes pulling at every moment, and an edited parallelism takes effect', async () => {
    const names = await fakeNodes(6, { pool: `${ns}-par` });
    daemon.behaviour = () => ({ phase: 'Succeeded', afterMs: 400 });
    const j = await createJob('par', { image: image(4), parallelism: 2, selector: { matchLabels: { pool: `${ns}-par` } } });
    const w = watchActive(j.metadata?.uid ?? '', key(4));
    await waitJob('par', completed, 'completed');
    w.stop();
    expect(w.max()).toBe(2);

    const p = await createJob('paused', { image: image(5), parallelism: 0, selector: { matchLabels: { pool: `${ns}-par` } } });
    const w2 = watchActive(p.metadata?.uid ?? '', key(5));
    await waitJob('paused', (x) => x.status?.desired === 6, 'counted');
    await new Promise((r) => setTimeout(r, 1500));
    expect(Object.values(await ownersOn(names, key(5))).flat()).toEqual([]);
    expect((await jobs.get(ns, 'paused')).status).toMatchObject({ active: 0, succeeded: 0, message: 'job is running, progress 0.0%' });
    await jobs.patch(ns, 'paused', { spec: { parallelism: 3 } });
    await waitJob('paused', completed, 'completed');
    w2.stop();
    daemon.behaviour = () => ({ phase: 'Succeeded' });
    expect(w2.max()).toBe(3);
  });

  it('a reconcile that leaves its last writes running counts them: `parallelism` holds and no node is written twice', async () => {
    // 250 dispatches are more than a reconcile waits for (manager/imagepulljob/controller.ts,
    // TAIL_LEFT_RUNNING): it returns with its last 128 writes still going out at the installation's
    // 30 requests/s, and the job, woken by its first writes, plans again meanwhile. Taken for idle,
    // those nodes would be dispatched again: a second write queued behind each one under way, sent
    // from the stale cache and answered 409 Conflict.
    const pool = `${ns}-wide`;
    const names = await manyFakeNodeImages('w', 300, { pool });
    daemon.behaviour = () => ({ phase: 'Succeeded', afterMs: 15_000 });
    const from = auditSize(env.auditLog);
    const j = await createJob('wide', { image: image(6), parallelism: 250, selector: { matchLabels: { pool } } });
    const w = watchActive(j.metadata?.uid ?? '', key(6));
    const done = await waitJob('wide', completed, 'completed', 90_000);
    w.stop();
    daemon.behaviour = () => ({ phase: 'Succeeded' });
    expect(w.max()).toBe(250);
    expect(done.status).toMatchObject({ desired: 300, succeeded: 300, failed: 0, active: 0 });
    const writes = managerSpecWrites(auditEntries(env.auditLog, from, `"name":"${ns}-w`), names);
    expect(writes.filter((e) => e.responseStatus?.code !== 200).map((e) => `${e.objectRef?.name ?? ''} ${e.responseStatus?.code ?? 0}`)).toEqual([]);
    expect(writes.length).toBe(300);
  }, 120_000);

  it("a job's status goes out as soon as a chunk of more than 128 writes is queued, not once they are down to 128", async () => {
    // At the installation's 30 requests/s, 300 writes take some 10 s. A reconcile used to wait for
    // all but 128 of them (172 answered) before the job's status; with 50 jobs at 3 workers that wait
    // held each job's status for minutes.
    const pool = `${ns}-early`;
    const names = await manyFakeNodeImages('e', 300, { pool });
    const from = auditSize(env.auditLog);
    await createJob('early', { image: image(18), parallelism: 300, selector: { matchLabels: { pool } } });
    const done = await waitJob('early', completed, 'completed', 90_000);
    expect(done.status).toMatchObject({ desired: 300, succeeded: 300, failed: 0, active: 0 });
    const answered = (e: { stageTimestamp?: string }): number => Date.parse(e.stageTimestamp ?? '');
    const nodeWrites = managerSpecWrites(auditEntries(env.auditLog, from, `"name":"${ns}-e`), names)
      .filter((e) => e.responseStatus?.code === 200)
      .map(answered)
      .sort((x, y) => x - y);
    expect(nodeWrites.length).toBe(300);
    const statusWrites = auditEntries(env.auditLog, from, '"imagepulljobs"')
      .filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.subresource === 'status' && e.objectRef.name === 'early' && e.user?.username?.endsWith(':kruise-ts-manager'))
      .map(answered)
      .sort((x, y) => x - y);
    // Its first status (startTime, 300 active) behind the writes already in the client's 30/s, not behind 172 of them.
    const before = nodeWrites.filter((t) => t < (statusWrites[0] ?? Infinity)).length;
    expect(before).toBeLessThan(150);
  }, 120_000);

  it("a write that fails among a reconcile's last ones, left running, fails the job's next reconcile, and the node is written on the retry", async () => {
    // Of more than 128 writes, a reconcile returns while its last ones are out: their failures can
    // only reach the work queue (its backoff, its log line) through the next reconcile.
    const pool = `${ns}-tail`;
    const labels = { 'kruise-ts.test/refuse': ns };
    const names = await manyFakeNodeImages('t', 300, { pool, ...labels });
    await createFakeNodeImage(rest, `${ns}-tprobe`, daemon, labels);
    const targets = new Set(Array.from({ length: 10 }, (_, i) => `${ns}-t${i * 30}`));
    // Refused until the manager has logged the failure: the API server tries an update on its watch
    // cache's copy first and on any error tries again on etcd's (GuaranteedUpdate in
    // k8s.io/apiserver/pkg/storage/etcd3/store.go), so a single refusal never reached the manager.
    let armed = true;
    const hook = await RefusingWebhook.start(rest, {
      name: `${ns}-refuse`,
      group: 'apps.kruise.io',
      resource: 'nodeimages',
      labels,
      refuse: (name, user) => (user.endsWith(':kruise-ts-manager') ? armed && targets.has(name) : name === `${ns}-tprobe`),
      probe: async () => nis.update(await nis.get(undefined, `${ns}-tprobe`)),
    });
    try {
      const from = auditSize(env.auditLog);
      await createJob('tail', { image: image(7), parallelism: 300, selector: { matchLabels: { pool } } });
      // "k of n NodeImage writes failed" with n above 128: a round that returned before its last
      // writes, reported by the reconcile after it. Smaller rounds (the refused nodes tried again)
      // report their own failures at once.
      const failedRound = await eventually(() => {
        const rounds = logEntries(readFileSync(installation().manager.log, 'utf8'))
          .filter((l) => l['message'] === 'reconcile failed, will retry' && l['key'] === `${ns}/tail`)
          .filter((l) => String(l['cause']).includes(`refused by ${ns}-refuse`))
          .map((l) => /^(\d+) of (\d+) NodeImage writes failed$/.exec(String(l['error'])))
          .filter((m) => m !== null && Number(m[2]) > 128);
        expect(rounds.length).toBeGreaterThan(0);
        return rounds[0];
      }, 60_000);
      expect(failedRound?.[1]).toBe('10');
      armed = false;
      const done = await waitJob('tail', completed, 'completed', 90_000);
      expect(done.status).toMatchObject({ desired: 300, succeeded: 300, failed: 0, active: 0 });
      expect(new Set(hook.refused)).toEqual(targets);
      const writes = managerSpecWrites(auditEntries(env.auditLog, from, `"name":"${ns}-t`), names);
      expect(new Set(writes.filter((e) => e.responseStatus?.code === 403).map((e) => e.objectRef?.name))).toEqual(targets);
      const written = writes.filter((e) => e.responseStatus?.code === 200).map((e) => e.objectRef?.name);
      expect(written.length).toBe(300);
      expect(new Set(written).size).toBe(300);
    } finally {
      await hook.stop();
    }
  }, 150_000);

  it('follows an edited selector: leaves nodes it no longer selects (stopping their pull), takes the new ones', async () => {
    const a = await fakeNodes(2, { pool: `${ns}-sel-a` });
    const b = await fakeNodes(2, { pool: `${ns}-sel-b` });
    daemon.behaviour = (node) => (a.includes(node) ? { phase: 'Pulling' } : { phase: 'Succeeded' });
    await createJob('sel', { image: image(6), parallelism: 10, completionPolicy: { type: 'Never' }, selector: { matchLabels: { pool: `${ns}-sel-a` } } });
    await waitJob('sel', (x) => x.status?.desired === 2 && x.status.active === 2, 'pulling on a');
    await jobs.patch(ns, 'sel', { spec: { selector: { matchLabels: { pool: `${ns}-sel-b` } } } });
    await waitJob('sel', (x) => x.status?.desired === 2 && x.status.succeeded === 2, 'done on b');
    await eventually(async () => expect(Object.values(await ownersOn(a, key(6))).flat()).toEqual([]));
    expect(Object.values(await ownersOn(b, key(6)))).toEqual([['sel'], ['sel']]);
    daemon.behaviour = () => ({ phase: 'Succeeded' });
    await jobs.delete(ns, 'sel');
  });

  it('Always with activeDeadlineSeconds: unfinished nodes fail when the deadline passes', async () => {
    const names = await fakeNodes(3, { pool: `${ns}-dl` });
    const [done] = names;
    daemon.behaviour = (node) => (node === done ? { phase: 'Succeeded' } : { phase: 'Pulling' });
    const t0 = Date.now();
    await createJob('deadline', {
      image: image(7),
      parallelism: 10,
      pullPolicy: { timeoutSeconds: 3, backoffLimit: 0 },
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 3 },
      selector: { matchLabels: { pool: `${ns}-dl` } },
    });
    const j = await waitJob('deadline', completed, 'completed');
    daemon.behaviour = () => ({ phase: 'Succeeded' });
    // status.startTime has whole seconds, as upstream's: the deadline may pass up to 1 s early.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
    expect(j.status).toMatchObject({ desired: 3, active: 0, succeeded: 1, failed: 2, failedNodes: names.slice(1).sort(), message: 'job exceeds activeDeadlineSeconds' });
    await eventually(async () => expect((await eventsOf('deadline')).map((e) => e.reason)).toContain('DeadlineExceeded'));
  });

  it('deletes a finished job after ttlSecondsAfterFinished, and its tags leave the NodeImages', async () => {
    const names = await fakeNodes(2, { pool: `${ns}-ttl` });
    await createJob('ttl', { image: image(8), parallelism: 2, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 2 }, selector: { matchLabels: { pool: `${ns}-ttl` } } });
    const j = await waitJob('ttl', completed, 'completed');
    const doneAt = Date.parse(j.status?.completionTime ?? '');
    await gone(jobs as unknown as Resource<KubeObject>, ns, 'ttl');
    expect(Date.now() - doneAt).toBeGreaterThanOrEqual(1000);
    await eventually(async () => expect(Object.values(await ownersOn(names, key(8))).flat()).toEqual([]));
  });

  it('a Never job picks up a node added later and lets go of a node deleted', async () => {
    const pool = `${ns}-late`;
    await fakeNodes(1, { pool });
    await createJob('never', { image: image(9), parallelism: 10, completionPolicy: { type: 'Never' }, selector: { matchLabels: { pool } } });
    await waitJob('never', (x) => x.status?.desired === 1 && x.status.succeeded === 1, 'done on the first node');
    const node = `${ns}-node-late`;
    createdNodes.push(node);
    await createFakeNode(rest, node, { pool, ...daemon.labels });
    const ni = await eventually(() => nis.get(undefined, node), 20_000);
    expect(ni.metadata?.labels).toMatchObject({ pool });
    await waitJob('never', (x) => x.status?.desired === 2 && x.status.succeeded === 2, 'done on the new node');
    expect((await jobs.get(ns, 'never')).status?.completionTime).toBeUndefined();
    await nodes.delete(undefined, node);
    await gone(nis as unknown as Resource<KubeObject>, undefined, node);
    await waitJob('never', (x) => x.status?.desired === 1, 'back to one node');
    await jobs.delete(ns, 'never');
  });

  it('two jobs and an ImageListPullJob share nodes and images without losing each other\'s tags', async () => {
    const pool = `${ns}-share`;
    const names = await fakeNodes(3, { pool });
    daemon.behaviour = () => ({ phase: 'Succeeded', afterMs: 200 });
    const template = { parallelism: 3, selector: { matchLabels: { pool } }, completionPolicy: { type: 'Always' as const } };
    await Promise.all([
      createJob('share-1', { image: image(10), ...template }),
      createJob('share-2', { image: image(10), ...template }),
      createJob('share-3', { image: image(11), ...template }),
      lists.create({ metadata: { name: 'share-list', namespace: ns }, spec: { images: [image(10), image(12)], ...template } }),
    ]);
    for (const n of ['share-1', 'share-2', 'share-3']) await waitJob(n, completed, 'completed');
    const list = await eventually(async () => {
      const l = await lists.get(ns, 'share-list');
      if (!l.status?.completionTime) throw new Error(`list not completed: ${JSON.stringify(l.status)}`);
      return l;
    }, 30_000);
    daemon.behaviour = () => ({ phase: 'Succeeded' });
    expect(list.status).toMatchObject({ desired: 2, completed: 2, succeeded: 2, active: 0 });
    const children = (await jobs.list(ns)).items.filter((c) => c.metadata?.ownerReferences?.some((o) => o.uid === list.metadata?.uid));
    expect(children.map((c) => c.spec.image).sort()).toEqual([image(10), image(12)]);
    const child10 = children.find((c) => c.spec.image === image(10))?.metadata?.name ?? '';
    const child12 = children.find((c) => c.spec.image === image(12))?.metadata?.name ?? '';
    for (const o of Object.values(await ownersOn(names, key(10)))) expect(o).toEqual([child10, 'share-1', 'share-2'].sort());
    for (const o of Object.values(await ownersOn(names, key(11)))) expect(o).toEqual(['share-3']);
    for (const o of Object.values(await ownersOn(names, key(12)))) expect(o).toEqual([child12]);
    // One round per node for the shared tag: joiners of a running round do not restart it.
    for (const n of names) expect((await nis.get(undefined, n)).spec?.images?.[key(10)]?.tags[0]?.version).toBeLessThanOrEqual(2);

    await lists.delete(ns, 'share-list');
    await eventually(async () => {
      for (const o of Object.values(await ownersOn(names, key(10)))) expect(o).toEqual(['share-1', 'share-2']);
      for (const o of Object.values(await ownersOn(names, key(12)))) expect(o).toEqual([]);
    }, 30_000);
  });

  it('deletes a finished ImageListPullJob after its ttlSecondsAfterFinished, children and all', async () => {
    const pool = `${ns}-listttl`;
    await fakeNodes(2, { pool });
    await lists.create({ metadata: { name: 'list-ttl', namespace: ns }, spec: { images: [image(30)], parallelism: 2, selector: { matchLabels: { pool } }, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 3 } } });
    // Seen completed (for the 3 s of its TTL), then gone.
    let completed = false;
    await eventually(async () => {
      const l = await lists.get(ns, 'list-ttl').catch((err: unknown) => {
        if (err instanceof ApiError && err.notFound) return undefined;
        throw err;
      });
      if (l?.status?.completionTime) completed = true;
      if (l) throw new Error(`list-ttl still there: ${JSON.stringify(l.status)}`);
    }, 30_000);
    expect(completed).toBe(true);
  });

  it('an ImageListPullJob replaces its children when the template changes', async () => {
    const pool = `${ns}-tmpl`;
    await fakeNodes(1, { pool });
    await lists.create({ metadata: { name: 'tmpl', namespace: ns }, spec: { images: [image(13)], parallelism: 1, selector: { matchLabels: { pool } }, completionPolicy: { type: 'Never' } } });
    const first = await eventually(async () => {
      const c = (await jobs.list(ns)).items.filter((x) => x.metadata?.name?.startsWith('tmpl-'));
      if (c.length !== 1) throw new Error(`children: ${c.length}`);
      return c[0] as ImagePullJob;
    });
    expect(first.metadata?.labels?.['controller-revision-hash']).toBe((await lists.get(ns, 'tmpl')).metadata?.labels?.['controller-revision-hash']);
    await lists.patch(ns, 'tmpl', { spec: { parallelism: 2 } });
    await eventually(async () => {
      const c = (await jobs.list(ns)).items.filter((x) => x.metadata?.name?.startsWith('tmpl-') && !x.metadata.deletionTimestamp);
      expect(c.map((x) => x.spec.parallelism)).toEqual([2]);
      expect(c[0]?.metadata?.name).not.toBe(first.metadata?.name);
    });
    await eventually(async () => expect((await eventsOf('tmpl')).map((e) => e.reason)).toEqual(expect.arrayContaining(['Successful create ImagePullJob', 'Successful delete ImagePullJob'])));
    await lists.delete(ns, 'tmpl');
  });

  it('copies pull secrets into the daemon namespace, keeps them current, shares them, releases them', async () => {
    const [n1, n2] = await fakeNodes(2);
    const auth = Buffer.from(JSON.stringify({ auths: { [env.registryAuth]: { username: 'tester', password: 'old' } } })).toString('base64');
    await secrets.create({ metadata: { name: 'regcred', namespace: ns }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': auth } });
    const copy = copyName(ns, 'regcred');
    await createJob('sec-a', { image: image(14), pullSecrets: ['regcred'], completionPolicy: { type: 'Never' }, selector: { names: [n1 ?? ''] } });
    const c1 = await eventually(() => secrets.get(DAEMON_NS, copy));
    expect(c1.data).toEqual({ '.dockerconfigjson': auth });
    expect(c1.type).toBe('kubernetes.io/dockerconfigjson');
    expect(c1.metadata?.annotations).toMatchObject({ 'imagepulljobs.kruise.io/references': `${ns}/sec-a`, 'imagepulljobs.kruise.io/source-key': `${ns}/regcred` });
    await eventually(async () => expect((await nis.get(undefined, n1 ?? '')).spec?.images?.[key(14)]?.pullSecrets).toEqual([{ namespace: DAEMON_NS, name: copy }]));

    const auth2 = Buffer.from(JSON.stringify({ auths: { [env.registryAuth]: { username: 'tester', password: 'new' } } })).toString('base64');
    await secrets.patch(ns, 'regcred', { data: { '.dockerconfigjson': auth2 } });
    await eventually(async () => expect((await secrets.get(DAEMON_NS, copy)).data).toEqual({ '.dockerconfigjson': auth2 }), 10_000);

    daemon.behaviour = () => ({ phase: 'Succeeded', afterMs: 1500 });
    await createJob('sec-b', { image: image(15), pullSecrets: ['regcred'], selector: { names: [n2 ?? ''] } });
    await eventually(async () => expect((await secrets.get(DAEMON_NS, copy)).metadata?.annotations?.['imagepulljobs.kruise.io/references']).toBe(`${ns}/sec-a,${ns}/sec-b`));
    await waitJob('sec-b', completed, 'completed');
    daemon.behaviour = () => ({ phase: 'Succeeded' });
    await eventually(async () => expect((await secrets.get(DAEMON_NS, copy)).metadata?.annotations?.['imagepulljobs.kruise.io/references']).toBe(`${ns}/sec-a`));
    await jobs.delete(ns, 'sec-a');
    await gone(secrets as Resource<KubeObject>, DAEMON_NS, copy);
    // The reference to the deleted copy goes with the tag.
    await eventually(async () => expect((await nis.get(undefined, n1 ?? '')).spec?.images?.[key(14)]).toBeUndefined());
  });

  it('a job deleted mid-way: its tags leave the nodes and its secret copies are released', async () => {
    const names = await fakeNodes(3, { pool: `${ns}-del` });
    daemon.behaviour = () => ({ phase: 'Pulling' });
    await secrets.create({ metadata: { name: 'delcred', namespace: ns }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from('{"auths":{}}').toString('base64') } });
    await createJob('del', { image: image(16), pullSecrets: ['delcred'], parallelism: 1, selector: { matchLabels: { pool: `${ns}-del` } } });
    await waitJob('del', (x) => x.status?.active === 1, 'pulling on one node');
    expect(Object.values(await ownersOn(names, key(16))).flat()).toEqual(['del']);
    await secrets.get(DAEMON_NS, copyName(ns, 'delcred'));
    await jobs.delete(ns, 'del');
    await gone(jobs as unknown as Resource<KubeObject>, ns, 'del');
    await gone(secrets as Resource<KubeObject>, DAEMON_NS, copyName(ns, 'delcred'));
    await eventually(async () => expect(Object.values(await ownersOn(names, key(16))).flat()).toEqual([]));
    daemon.behaviour = () => ({ phase: 'Succeeded' });
  });

  it('fails a node whose NodeImage already holds 256 images, with a clear message', async () => {
    const full = `${ns}-full`;
    const images: NonNullable<NodeImage['spec']>['images'] = {};
    for (let i = 0; i < 256; i++) images[`example.com/filler-${i}`] = { tags: [{ tag: '1', pullPolicy: { ttlSecondsAfterFinished: 3600 } }] };
    await nis.create({ metadata: { name: full, labels: { 'apps.kruise.io/fake-nodeimage': 'true' } }, spec: { images } });
    const [ok] = await fakeNodes(1);
    await createJob('full', { image: image(17), parallelism: 5, selector: { names: [full, ok ?? ''] } });
    const j = await waitJob('full', completed, 'completed');
    expect(j.status).toMatchObject({ desired: 2, succeeded: 1, failed: 1, failedNodes: [full] });
    expect(Object.keys((await nis.get(undefined, full)).spec?.images ?? {})).toHaveLength(256);
    await eventually(async () => {
      const ev = (await eventsOf('full')).find((e) => e.reason === 'PullImageFailed');
      expect(ev?.message).toBe(`node ${full}: cannot add image ${key(17)}, its NodeImage already holds 256 images (the most a NodeImage may hold)`);
    });
  });

  it('an edit that lowers the pull policy reaches the nodes; a finished job refuses edits but to its TTL (kruise#2221, #1386)', async () => {
    const [n = ''] = await fakeNodes(1);
    const img = key(32);
    const policyOn = async (): Promise<unknown> => (await nis.get(undefined, n)).spec?.images?.[img]?.tags[0]?.pullPolicy;
    daemon.behaviour = (_node, i) => (i === img ? { phase: 'Pulling' } : { phase: 'Succeeded' });
    try {
      await createJob('edit', { image: image(32), selector: { names: [n] }, pullPolicy: { timeoutSeconds: 600, backoffLimit: 5 } });
      await eventually(async () => expect(await policyOn()).toMatchObject({ timeoutSeconds: 600, backoffLimit: 5 }));
      await jobs.patch(ns, 'edit', { spec: { pullPolicy: { timeoutSeconds: 60, backoffLimit: 1 } } });
      await eventually(async () => expect(await policyOn()).toMatchObject({ timeoutSeconds: 60, backoffLimit: 1 }));
      await daemon.complete(n, img, '1.0');
      await waitJob('edit', completed, 'completed');
      const err = await jobs.patch(ns, 'edit', { spec: { parallelism: 3 } }).then(
        () => new Error('admitted'),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApiError);
      expect((err as Error).message).toMatch(/spec: the job finished at \S+ and pulls nothing more, so its spec cannot change \(only completionPolicy.ttlSecondsAfterFinished may\)/);
      expect((await jobs.patch(ns, 'edit', { metadata: { labels: { touched: 'yes' } } })).metadata?.labels?.['touched']).toBe('yes');
      expect((await jobs.patch(ns, 'edit', { spec: { completionPolicy: { ttlSecondsAfterFinished: 300 } } })).spec.completionPolicy?.ttlSecondsAfterFinished).toBe(300);
    } finally {
      daemon.behaviour = () => ({ phase: 'Succeeded' });
    }
  });

  it("moves the manager's metrics by what it did: an admission refused, a job's reconciles and writes", async () => {
    const port = installation().manager.metricsPort;
    const [a = '', b = ''] = await fakeNodes(2);
    const validate = '/validate-apps-kruise-io-imagepulljob';
    const before = await scrape(port);
    await expect(createJob('metrics-bad', { selector: { names: [a, a] } })).rejects.toThrow(/duplicate node name/);
    await createJob('metrics', { image: image(31), selector: { names: [a, b] } });
    await waitJob('metrics', completed, 'completed');
    const after = await eventually(async () => {
      const m = await scrape(port);
      expect(sum(m, 'kruise_manager_workqueue_depth', { controller: 'imagepulljob-controller' })).toBe(0);
      return m;
    });
    const delta = (metric: string, match: Record<string, string> = {}): number => sum(after, metric, match) - sum(before, metric, match);
    expect(delta('kruise_manager_webhook_requests_total', { path: validate, allowed: 'false' })).toBe(1);
    expect(delta('kruise_manager_webhook_requests_total', { path: validate, allowed: 'true' })).toBeGreaterThanOrEqual(1);
    const reconciles = delta('kruise_manager_reconciles_total', { controller: 'imagepulljob-controller' });
    expect(reconciles).toBeGreaterThanOrEqual(2);
    expect(delta('kruise_manager_reconcile_duration_seconds_count', { controller: 'imagepulljob-controller' })).toBe(reconciles);
    // The tag went into both NodeImages, and the job's status was written.
    expect(delta('kruise_manager_api_requests_total', { verb: 'patch', resource: 'nodeimages', code: '200' })).toBeGreaterThanOrEqual(2);
    expect(delta('kruise_manager_api_requests_total', { verb: 'update', resource: 'imagepulljobs/status', code: '200' })).toBeGreaterThanOrEqual(1);
    expect(sum(after, 'kruise_manager_leader')).toBe(1);
  });

  it('makes no writes once everything is done, and a status change wakes only the jobs whose tag changed', async () => {
    const [node] = await fakeNodes(1);
    for (let i = 0; i < 6; i++) await createJob(`quiet-${i}`, { image: image(20 + i), completionPolicy: { type: 'Never' }, selector: { names: [node ?? ''] } });
    for (let i = 0; i < 6; i++) await waitJob(`quiet-${i}`, (x) => x.status?.succeeded === 1, 'done');
    const port = installation().manager.metricsPort;
    const reconciles = (m: Map<string, number>): number => sum(m, 'kruise_manager_reconciles_total', { controller: 'imagepulljob-controller' });
    // The manager is shared with suites running in parallel, so its counters also move for their
    // objects. Each stimulus is repeated until one window shows only what this test caused: a bug
    // here (writes at rest, wake-ups of every job) shows in every window, noise only in some.
    const window = async (stimulus: (attempt: number) => Promise<void>, ms: number, ok: (r: { writes: number; reconciles: number }) => boolean): Promise<{ writes: number; reconciles: number }> => {
      let last = { writes: -1, reconciles: -1 };
      for (let attempt = 0; attempt < 4; attempt++) {
        const before = await scrape(port);
        await stimulus(attempt);
        await new Promise((r) => setTimeout(r, ms));
        const after = await scrape(port);
        last = { writes: writes(after) - writes(before), reconciles: reconciles(after) - reconciles(before) };
        if (ok(last)) return last;
      }
      return last;
    };
    // Settle: events still being written, informer echoes of the last status writes.
    await new Promise((r) => setTimeout(r, 2000));
    expect(await window(async () => undefined, 4000, (r) => r.writes === 0 && r.reconciles === 0)).toEqual({ writes: 0, reconciles: 0 });

    // Progress of one tag: nobody cares.
    const progress = await window(async (attempt) => {
      const ni = await nis.get(undefined, node ?? '');
      const t0 = ni.status?.imageStatuses?.[key(20)]?.tags[0];
      if (t0) t0.startTime = `2024-01-0${attempt + 1}T00:00:00Z`;
      await nis.updateStatus(ni);
    }, 1500, (r) => r.reconciles === 0);
    expect(progress.reconciles).toBe(0);

    // One tag failed on that node: only its job wakes (upstream woke all six).
    const woke = await window(async (attempt) => {
      const fresh = await nis.get(undefined, node ?? '');
      const t1 = fresh.status?.imageStatuses?.[key(21 + attempt)]?.tags[0];
      if (t1) t1.phase = 'Failed';
      await nis.updateStatus(fresh);
      await waitJob(`quiet-${1 + attempt}`, (x) => x.status?.failed === 1, 'failed');
    }, 1500, (r) => r.reconciles <= 2);
    // The job itself, then the echo of its own status write.
    expect(woke.reconciles).toBeGreaterThanOrEqual(1);
    expect(woke.reconciles).toBeLessThanOrEqual(2);
    for (let i = 0; i < 6; i++) await jobs.delete(ns, `quiet-${i}`);
  });
});
