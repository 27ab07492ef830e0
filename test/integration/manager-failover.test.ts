import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ImageListPullJob } from '../../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { managerArgs, portOffset, processAlive, restartManager } from '../../hack/kruise.js';
import { Informer } from '../../kube/informer.js';
import { Resource } from '../../kube/resource.js';
import { nodeImages } from '../helpers/daemon.js';
import { createFakeNodeImage, FakeDaemon } from '../helpers/fake-daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, kruise } from '../helpers/kube.js';
import { installation, scrape, sum } from '../helpers/manager.js';

// A job survives its manager: a clean hand-over to a standby replica, then a crash of that replica
// and a new process. Throughout, never more than `parallelism` nodes pull, no node is written twice,
// nothing is lost. The shared manager of the run is the first replica; the suite puts a fresh one
// back in its place at the end.
const env = clusterEnv();
const rest = restClient();
const nis = nodeImages(rest);
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
const offset = portOffset(env);
const standbyPorts = { webhook: 9877 + offset, metrics: 18081 + offset, health: 18001 + offset };
let ns = '';
let daemon: FakeDaemon;
let standby: ChildProcess | undefined;
const IMG = `${env.registryOpen}/many-070`;

beforeAll(async () => {
  ns = await createNamespace(rest, 'failover');
  daemon = new FakeDaemon(rest, ns, () => ({ phase: 'Pulling' }));
  await daemon.synced();
});
afterAll(async () => {
  standby?.kill('SIGKILL');
  daemon.stop();
  // Whatever happened, the run goes on with a manager in the usual place.
  if (!processAlive(installation().manager.pid)) await restartManager(env);
  for (const ni of (await nis.list(undefined)).items) {
    if (ni.metadata?.name?.startsWith(ns)) await nis.delete(undefined, ni.metadata.name).catch(() => undefined);
  }
  await deleteNamespace(rest, ns);
});

function startStandby(): ChildProcess {
  const log = join(env.envDir, 'kruise', 'manager-standby.log');
  const out = openSync(log, 'a');
  return spawn(
    process.execPath,
    managerArgs(env, [
      '--webhook-port', String(standbyPorts.webhook),
      '--webhook-url', `https://127.0.0.1:${standbyPorts.webhook}`,
      '--metrics-addr', `127.0.0.1:${standbyPorts.metrics}`,
      '--health-probe-addr', `127.0.0.1:${standbyPorts.health}`,
    ]),
    { stdio: ['ignore', out, out] },
  );
}

describe('kruise-manager restart and leader hand-over', () => {
  it('serves /healthz, /readyz and /metrics with reconciles, errors, queue depth and API requests by verb and resource', async () => {
    const m = installation().manager;
    // Something for each controller to do: a list job, its child, and the nodes' NodeImages.
    const lists = new Resource<ImageListPullJob>(rest, kruise.imageListPullJobs);
    await lists.create({ metadata: { name: 'metrics', namespace: ns }, spec: { images: [`${IMG}:2.0`], selector: { names: [`${ns}-none`] }, completionPolicy: { type: 'Never' } } });
    await eventually(async () => expect((await lists.get(ns, 'metrics')).status?.desired).toBe(1));
    // The one node it names does not exist: counted, and named in the message.
    await eventually(async () => expect((await jobs.list(ns)).items[0]?.status?.desired).toBe(1));
    expect(await (await fetch(`http://127.0.0.1:${m.healthPort}/healthz`)).text()).toBe('ok');
    expect((await fetch(`http://127.0.0.1:${m.healthPort}/readyz`)).status).toBe(200);
    const text = await (await fetch(`http://127.0.0.1:${m.metricsPort}/metrics`)).text();
    // A node whose tags wait on a TTL ends its reconciles as "requeue" rather than "success" (one CI
    // run's nodes all did): either shows the controller's reconciles are counted.
    for (const c of ['nodeimage-controller', 'imagepulljob-controller', 'imagelistpulljob-controller']) {
      expect(text).toMatch(new RegExp(`kruise_manager_reconciles_total\\{controller="${c}",result="(success|requeue)"\\} [1-9]`));
      expect(text).toContain(`kruise_manager_workqueue_depth{controller="${c}"}`);
    }
    expect(text).toContain('# TYPE kruise_manager_reconciles_total counter');
    expect(text).toContain('# TYPE kruise_manager_events_total counter');
    expect(text).toMatch(/kruise_manager_api_requests_total\{verb="update",resource="imagelistpulljobs\/status",code="200"\} [1-9]/);
    expect(text).toMatch(/kruise_manager_api_requests_total\{verb="watch",resource="imagepulljobs",code="200"\} [1-9]/);
    expect(text).toMatch(/kruise_manager_leader 1/);
  });

  it('hands a running job over to a standby, survives a crash of that one, and finishes it exactly once', async () => {
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      names.push(`${ns}-n${i}`);
      await createFakeNodeImage(rest, `${ns}-n${i}`, daemon, { pool: ns });
    }
    // Every node holds the job's round open until the test finishes it.
    const watch = new Informer<NodeImage>(nis, { labelSelector: `pool=${ns}` });
    const ac = new AbortController();
    let maxActive = 0;
    const versions = new Set<number>();
    const count = (): void => {
      let active = 0;
      for (const ni of watch.list()) {
        const t = ni.spec?.images?.[IMG]?.tags.find((x) => x.tag === '1.0');
        if (!t) continue;
        versions.add(t.version ?? 0);
        const s = ni.status?.imageStatuses?.[IMG]?.tags.find((x) => x.tag === '1.0');
        if (!s || s.phase === 'Pulling') active++;
      }
      maxActive = Math.max(maxActive, active);
    };
    watch.on({ add: count, update: count });
    void watch.run(ac.signal);

    const synced = async (n: number): Promise<string[]> =>
      eventually(async () => {
        const withTag = (await Promise.all(names.map((x) => nis.get(undefined, x)))).filter((ni) => ni.spec?.images?.[IMG]).map((ni) => ni.metadata?.name ?? '');
        if (withTag.length !== n) throw new Error(`${withTag.length} nodes have the tag, want ${n}`);
        return withTag;
      }, 40_000, 100);
    const finish = async (nodes: string[]): Promise<void> => {
      for (const n of nodes) await daemon.complete(n, IMG, '1.0');
    };

    await jobs.create({ metadata: { name: 'survivor', namespace: ns }, spec: { image: `${IMG}:1.0`, parallelism: 2, completionPolicy: { type: 'Always' }, selector: { matchLabels: { pool: ns } } } });
    const first = await synced(2);
    await finish(first.slice(0, 1));
    await synced(3);

    // A standby replica: serves the webhook at once, waits for the lease.
    standby = startStandby();
    await eventually(async () => expect((await fetch(`http://127.0.0.1:${standbyPorts.health}/readyz`)).status).toBe(200), 30_000, 200);
    expect(sum(await scrape(standbyPorts.metrics), 'kruise_manager_leader')).toBe(0);

    // Clean hand-over: the leader stops on SIGTERM, drains, gives the lease back; the standby leads.
    const leader = installation().manager;
    process.kill(leader.pid, 'SIGTERM');
    await eventually(() => expect(processAlive(leader.pid)).toBe(false), 15_000, 100);
    expect(readFileSync(leader.log, 'utf8')).toMatch(/"message":"released leadership"[\s\S]*"message":"stopped"/);
    await eventually(async () => expect(sum(await scrape(standbyPorts.metrics), 'kruise_manager_leader')).toBe(1), 10_000, 100);
    const third = await synced(3);
    await finish(third.filter((n) => !first.slice(0, 1).includes(n)));
    const five = await synced(5);

    // Crash: the new leader dies without giving the lease back, with two nodes still pulling.
    standby.kill('SIGKILL');
    await new Promise((r) => standby?.once('exit', r));
    const running = five.filter((n) => !first.includes(n) && !third.includes(n));
    await finish(running.slice(0, 1));
    // A new process takes the shared manager's place; it leads once the dead one's lease expires.
    await restartManager(env);
    await synced(6);
    await finish(names);
    const done = await eventually(async () => {
      const j = await jobs.get(ns, 'survivor');
      if (!j.status?.completionTime) throw new Error(`not completed: ${JSON.stringify(j.status)}`);
      return j;
    }, 40_000);
    ac.abort();
    expect(done.status).toMatchObject({ desired: 6, succeeded: 6, failed: 0, active: 0 });
    expect(maxActive).toBeLessThanOrEqual(2);
    // Every node got the tag once, in one round, with the job as its only owner.
    expect([...versions]).toEqual([0]);
    for (const n of names) {
      const t = (await nis.get(undefined, n)).spec?.images?.[IMG]?.tags ?? [];
      expect(t.map((x) => [x.tag, x.version, x.ownerReferences?.map((o) => o.name)])).toEqual([['1.0', 0, ['survivor']]]);
    }
  });
});
