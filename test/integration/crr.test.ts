import type { Pod } from '../../api/types/core.js';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { crrToV1beta1 } from '../../api/crr-conversion.js';
import { LABEL_CRR_ACTIVE, LABEL_CRR_NODE_NAME } from '../../api/metadata-keys.js';
import { CriClient } from '../../daemon/cri/client.js';
import { startInstalledDaemon, stopInstalledDaemon } from '../../hack/kruise.js';
import { completedCrr, container, crrSpec, ignoresTerm, listeningPorts, podEvents, podSpec, pushBadStopSignalImage, resources, runningPod, statusOf, termHandling } from '../helpers/crr.js';
import { spawnDaemon } from '../helpers/daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, startProxy } from '../helpers/kube.js';
import { installation, scrape, sum } from '../helpers/manager.js';

// ContainerRecreateRequests end to end through the installation the global setup runs (webhook,
// manager controller, a daemon per node) on real kubelets: the daemon stops real containers and
// the kubelets restart them.
const env = clusterEnv();
const rest = restClient();
const { pods, crrs, events } = resources(rest);
const [node1, node2] = env.nodes.map((n) => n.name) as [string, string];
const hooks = join(env.envDir, 'crr-hooks');
let ns = '';
const cris = new Map<string, CriClient>();

beforeAll(async () => {
  ns = await createNamespace(rest, 'crr');
  for (const n of env.nodes) cris.set(n.name, new CriClient(n.criSocket));
});
afterAll(async () => {
  await deleteNamespace(rest, ns);
  for (const c of cris.values()) c.close();
  rmSync(join(hooks, ns), { recursive: true, force: true });
  await rest.close();
});

async function startPod(p: Pod): Promise<Pod> {
  await pods.create(p);
  return runningPod(pods, ns, p.metadata?.name ?? '');
}

function hookDir(name: string): string {
  const dir = join(hooks, ns, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function lines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
  } catch {
    return [];
  }
}

/** Records every phase each CRR of the namespace goes through, in order, from a watch. */
class PhaseLog {
  readonly seen: Array<{ name: string; phase: string; at: number }> = [];
  private readonly ac = new AbortController();
  private readonly done: Promise<void>;

  constructor(rv: string) {
    this.done = crrs
      .watch(ns, { resourceVersion: rv }, (ev) => {
        const name = ev.object.metadata?.name ?? '';
        const phase = ev.object.status?.phase ?? '';
        const last = [...this.seen].reverse().find((s) => s.name === name);
        if (phase !== '' && last?.phase !== phase) this.seen.push({ name, phase, at: Date.now() });
      }, this.ac.signal)
      .catch(() => undefined);
  }

  static async start(): Promise<PhaseLog> {
    const list = await crrs.list(ns, { limit: 1 });
    return new PhaseLog(list.metadata?.resourceVersion ?? '');
  }

  index(name: string, phase: string): number {
    return this.seen.findIndex((s) => s.name === name && s.phase === phase);
  }

  async stop(): Promise<void> {
    this.ac.abort();
    await this.done;
  }
}

describe('ContainerRecreateRequest execution', () => {
  it('recreates a single container: kill event, state, completion, active label removed', async () => {
    const before = await startPod(podSpec(ns, 'single', node1, [container('main', termHandling())]));
    const oldId = statusOf(before, 'main').containerID;
    await crrs.create(crrSpec(ns, 'single', 'single', ['main']));
    const done = await completedCrr(crrs, ns, 'single');
    expect(done.status?.containerRecreateStates).toEqual([{ name: 'main', phase: 'Succeeded', isKilled: true }]);
    expect(done.status?.message).toBeUndefined();
    expect(done.status?.completionTime).toBeDefined();
    const after = await pods.get(ns, 'single');
    expect(statusOf(after, 'main').restartCount).toBe(1);
    expect(statusOf(after, 'main').containerID).not.toBe(oldId);
    // Graceful: the shell exited on TERM.
    expect(statusOf(after, 'main').lastState?.terminated?.exitCode).toBe(0);
    await eventually(async () => expect((await crrs.get(ns, 'single')).metadata?.labels?.[LABEL_CRR_ACTIVE]).toBeUndefined(), 20_000);
    expect((await crrs.get(ns, 'single')).metadata?.labels?.[LABEL_CRR_NODE_NAME]).toBe(node1);
    const killing = await podEvents(events, ns, 'single', 'Killing');
    expect(killing).toHaveLength(1);
    expect(killing[0]).toMatchObject({
      type: 'Normal',
      message: 'Stopping container main by ContainerRecreateRequest single',
      source: { component: 'kruise-daemon-crr', host: node1 },
      involvedObject: { fieldPath: 'spec.containers{main}', uid: before.metadata?.uid },
    });
  });

  it("waits for the kubelet's report of the recreated container without looking at the runtime meanwhile", async () => {
    // The kubelet reports a started container only once its postStart hook returned: 15 s in which
    // the new instance runs and the daemon has nothing to learn from the runtime.
    const slow = container('main', termHandling(), { lifecycle: { postStart: { exec: { command: ['sleep', '15'] } } } });
    await startPod(podSpec(ns, 'slow-report', node1, [slow]));
    const daemonPort = installation().daemons.find((d) => d.node === node1)?.port ?? 0;
    const runtimeLooks = async (): Promise<number> => sum(await scrape(daemonPort), 'kruise_daemon_cri_requests_total', { method: 'ListContainers' });
    await crrs.create(crrSpec(ns, 'slow-report', 'slow-report', ['main']));
    await eventually(async () => expect((await crrs.get(ns, 'slow-report')).status?.containerRecreateStates?.[0]?.isKilled).toBe(true), 20_000, 100);
    // The looks right after the stop (and on the echo of its own status write) are over by then.
    await new Promise((r) => setTimeout(r, 2_000));
    const from = await runtimeLooks();
    const t0 = Date.now();
    await eventually(async () => expect(crrToV1beta1(await crrs.get(ns, 'slow-report')).status?.containerStatusSnapshot?.length).toBe(1), 40_000, 100);
    const quietMs = Date.now() - t0;
    // At most the look the report itself woke (a 5 s timer would have looked twice in this window).
    expect(quietMs).toBeGreaterThan(10_000);
    expect((await runtimeLooks()) - from).toBeLessThanOrEqual(1);
    expect((await completedCrr(crrs, ns, 'slow-report')).status?.containerRecreateStates).toEqual([{ name: 'main', phase: 'Succeeded', isKilled: true }]);
  }, 120_000);

  it('recreates several containers in parallel when unordered', async () => {
    // Each container ignores TERM, so each stop takes the full 3 s grace: one after the other the
    // three would take 9 s or more.
    await startPod(podSpec(ns, 'multi', node2, ['a', 'b', 'c'].map((n) => container(n, ignoresTerm)), { grace: 3 }));
    await crrs.create(crrSpec(ns, 'multi', 'multi', ['a', 'b', 'c'], { failurePolicy: 'Ignore' }));
    const done = await completedCrr(crrs, ns, 'multi');
    expect(done.status?.containerRecreateStates?.map((s) => s.phase)).toEqual(['Succeeded', 'Succeeded', 'Succeeded']);
    // The CRR completes on the containers' readiness; the kubelet can report a restart a moment
    // before the old instance's termination (lastState) that the timing check reads.
    const after = await eventually(async () => {
      const pod = await pods.get(ns, 'multi');
      for (const n of ['a', 'b', 'c']) expect(statusOf(pod, n).lastState?.terminated?.finishedAt).toBeDefined();
      return pod;
    }, 20_000);
    const finished = ['a', 'b', 'c'].map((n) => Date.parse(String(statusOf(after, n).lastState?.terminated?.finishedAt)));
    expect(['a', 'b', 'c'].map((n) => statusOf(after, n).restartCount)).toEqual([1, 1, 1]);
    expect(Math.max(...finished) - Math.min(...finished)).toBeLessThan(3_000);
  });

  it('recreates containers one after the other, each back and ready first, when ordered', async () => {
    await startPod(podSpec(ns, 'ordered', node1, ['a', 'b'].map((n) => container(n, termHandling()))));
    await crrs.create(crrSpec(ns, 'ordered', 'ordered', ['a', 'b'], { orderedRecreate: true }));
    await completedCrr(crrs, ns, 'ordered');
    const after = await pods.get(ns, 'ordered');
    const a = statusOf(after, 'a');
    const b = statusOf(after, 'b');
    expect([a.restartCount, b.restartCount]).toEqual([1, 1]);
    // b was stopped only after a's new instance had started.
    expect(Date.parse(String(b.lastState?.terminated?.finishedAt))).toBeGreaterThanOrEqual(Date.parse(String(a.state?.running?.startedAt)));
  });

  it('honours the grace period: a TERM-ignoring container is killed only when it runs out', async () => {
    await startPod(podSpec(ns, 'grace', node2, [container('stubborn', ignoresTerm), container('polite', termHandling())], { grace: 1 }));
    const t0 = Date.now();
    await crrs.create(crrSpec(ns, 'grace', 'grace', ['stubborn', 'polite'], { failurePolicy: 'Ignore', terminationGracePeriodSeconds: 5 }));
    // failurePolicy Ignore completes the CRR even when a stop fails: the states tell.
    expect((await completedCrr(crrs, ns, 'grace')).status?.containerRecreateStates).toEqual([
      { name: 'stubborn', phase: 'Succeeded', isKilled: true },
      { name: 'polite', phase: 'Succeeded', isKilled: true },
    ]);
    // The CRR completes on the runtime's view; the kubelet reports both restarts in the pod's status
    // on its own schedule.
    const [stubborn, polite] = await eventually(async () => {
      const after = await pods.get(ns, 'grace');
      const terminated = ['stubborn', 'polite'].map((n) => statusOf(after, n).lastState?.terminated);
      expect(terminated.map((t) => t?.exitCode)).toEqual([137, 0]);
      return terminated;
    });
    // Times in the pod status have whole seconds.
    expect(Date.parse(String(stubborn?.finishedAt)) - Date.parse(String(polite?.finishedAt))).toBeGreaterThanOrEqual(3_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(5_000);
  });

  it('runs an exec preStop hook inside the container before stopping it', async () => {
    const dir = hookDir('exec');
    const log = '/hook/log';
    const main = container('main', termHandling(log), { lifecycle: { preStop: { exec: { command: ['sh', '-c', `echo prestop >> ${log}`] } } } });
    await startPod(podSpec(ns, 'exec-hook', node1, [main], { hostDir: dir }));
    await crrs.create(crrSpec(ns, 'exec-hook', 'exec-hook', ['main']));
    await completedCrr(crrs, ns, 'exec-hook');
    expect(lines(join(dir, 'log'))).toEqual(['prestop', 'term']);
    expect(await podEvents(events, ns, 'exec-hook', 'FailedPreStopHook')).toHaveLength(0);
  });

  it('reports a container whose stop began before activeDeadlineSeconds as recreated, not failed, and stops no other', async () => {
    // The preStop hook outlasts the 3 s deadline by far: the stop is under way when time runs out.
    const slow = container('slow', termHandling(), { lifecycle: { preStop: { exec: { command: ['sleep', '8'] } } } });
    const before = await startPod(podSpec(ns, 'deadline', node2, [slow, container('other', termHandling())], { grace: 30 }));
    await crrs.create(crrSpec(ns, 'deadline', 'deadline', ['slow', 'other'], { orderedRecreate: true }, { activeDeadlineSeconds: 3 }));
    const done = await completedCrr(crrs, ns, 'deadline', 90_000);
    expect(done.status?.message).toBe('recreating has exceeded the activeDeadlineSeconds');
    expect(done.status?.containerRecreateStates).toEqual([
      { name: 'slow', phase: 'Succeeded', isKilled: true },
      { name: 'other', phase: 'Failed', message: 'recreating has exceeded the activeDeadlineSeconds' },
    ]);
    // Completed once the kubelet had brought the container back, not at the deadline.
    expect(Date.parse(String(done.status?.completionTime)) - Date.parse(String(done.metadata?.creationTimestamp))).toBeGreaterThanOrEqual(8_000);
    const after = await pods.get(ns, 'deadline');
    expect(statusOf(after, 'slow').restartCount).toBe(1);
    expect(statusOf(after, 'slow').containerID).not.toBe(statusOf(before, 'slow').containerID);
    expect(statusOf(after, 'other').restartCount).toBe(0);
  });

  it('sends httpGet hooks to the pod (host network: the node) on a named port, and opens tcpSocket hooks', async () => {
    const dir = hookDir('http');
    // Below the ephemeral range (32768 on), where a client connection of the run could hold it.
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const cgi = `mkdir -p /www/cgi-bin && printf '#!/bin/sh\\necho "http $REQUEST_URI" >> /hook/web\\necho "Content-Type: text/plain"\\necho\\necho ok\\n' > /www/cgi-bin/hook && chmod +x /www/cgi-bin/hook && httpd -p ${port} -h /www; `;
    const web = container('web', termHandling('/hook/web', cgi), {
      ports: [{ name: 'hook', containerPort: port }],
      lifecycle: { preStop: { httpGet: { path: '/cgi-bin/hook?from=crr', port: 'hook' } } },
    });
    const tcp = container('tcp', termHandling('/hook/tcp', `(nc -l -p ${port + 1} </dev/null && echo connected >> /hook/tcp) & `), {
      lifecycle: { preStop: { tcpSocket: { port: port + 1 } } },
    });
    await startPod(podSpec(ns, 'http-hook', node2, [web, tcp], { hostDir: dir }));
    // Hooks find the servers up, as an application's would be by the time it is recreated.
    await eventually(async () => expect([port, port + 1].filter((p) => listeningPorts().has(p))).toEqual([port, port + 1]), 30_000, 100);
    const created = await crrs.create(crrSpec(ns, 'http-hook', 'http-hook', ['web', 'tcp'], { failurePolicy: 'Ignore' }));
    // Copied from the pod (host network: the API server defaults hostPort to containerPort).
    expect(created.spec.containers[0]?.ports).toEqual([{ name: 'hook', containerPort: port, hostPort: port, protocol: 'TCP' }]);
    await completedCrr(crrs, ns, 'http-hook');
    // A failed hook says why here before the logs below say only that it did not arrive.
    expect(await podEvents(events, ns, 'http-hook', 'FailedPreStopHook')).toHaveLength(0);
    expect(lines(join(dir, 'web'))).toEqual(['http /cgi-bin/hook?from=crr', 'term']);
    expect(lines(join(dir, 'tcp'))).toEqual(['connected', 'term']);
  });

  it('reports a failing preStop hook with a FailedPreStopHook event and still recreates', async () => {
    const main = container('main', termHandling(), { lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo no >&2; exit 3'] } } } });
    const p = await startPod(podSpec(ns, 'bad-hook', node1, [main]));
    await crrs.create(crrSpec(ns, 'bad-hook', 'bad-hook', ['main']));
    const done = await completedCrr(crrs, ns, 'bad-hook');
    expect(done.status?.containerRecreateStates?.[0]?.phase).toBe('Succeeded');
    const failed = await eventually(async () => {
      const e = await podEvents(events, ns, 'bad-hook', 'FailedPreStopHook');
      if (e.length === 0) throw new Error('no event yet');
      return e;
    }, 10_000);
    expect(failed[0]?.type).toBe('Warning');
    expect(failed[0]?.message).toContain(`Exec lifecycle hook ([sh -c echo no >&2; exit 3]) for Container "main" in Pod "bad-hook_${ns}(${p.metadata?.uid})" failed`);
    expect(failed[0]?.message).toContain('message: "no\\n"');
  });

  it('failurePolicy Fail stops at a container whose stop fails; Ignore goes on', async () => {
    const bad = await pushBadStopSignalImage(`badstop-${ns}`);
    const containers = [container('bad', ignoresTerm, { image: bad }), container('good', termHandling())];
    await startPod(podSpec(ns, 'fail', node1, containers));
    await startPod(podSpec(ns, 'ignore', node2, containers));
    await crrs.create(crrSpec(ns, 'fail', 'fail', ['bad', 'good'], { orderedRecreate: true, failurePolicy: 'Fail' }));
    await crrs.create(crrSpec(ns, 'ignore', 'ignore', ['bad', 'good'], { orderedRecreate: true, failurePolicy: 'Ignore' }));

    const fail = await completedCrr(crrs, ns, 'fail');
    expect(fail.status?.message).toBe('containers not recreated: bad, good');
    expect(fail.status?.containerRecreateStates?.[0]).toMatchObject({ name: 'bad', phase: 'Failed' });
    expect(fail.status?.containerRecreateStates?.[0]?.message).toMatch(/^kill container error: .*failed to parse stop signal/);
    expect(fail.status?.containerRecreateStates?.[1]).toEqual({ name: 'good', phase: 'Failed', message: 'abandoned: container bad failed and failurePolicy is Fail' });
    expect(statusOf(await pods.get(ns, 'fail'), 'good').restartCount).toBe(0);

    const ignore = await completedCrr(crrs, ns, 'ignore');
    expect(ignore.status?.message).toBe('containers not recreated: bad');
    expect(ignore.status?.containerRecreateStates?.map((s) => s.phase)).toEqual(['Failed', 'Succeeded']);
    const ip = await pods.get(ns, 'ignore');
    expect(statusOf(ip, 'good').restartCount).toBe(1);
    expect(statusOf(ip, 'bad').restartCount).toBe(0);
  });

  it('counts a container recreated since the CRR was made as done without a kill; forceRecreate kills it anyway', async () => {
    // The unready grace (no readiness gate: a plain delay) holds the CRR back while someone else
    // restarts the container through the runtime.
    for (const [name, node] of [['already', node1], ['forced', node2]] as const) {
      await startPod(podSpec(ns, name, node, [container('main', termHandling())]));
    }
    await crrs.create(crrSpec(ns, 'already', 'already', ['main'], { unreadyGracePeriodSeconds: 4 }));
    await crrs.create(crrSpec(ns, 'forced', 'forced', ['main'], { unreadyGracePeriodSeconds: 4, forceRecreate: true }));
    for (const [name, node] of [['already', node1], ['forced', node2]] as const) {
      const id = statusOf(await pods.get(ns, name), 'main').containerID ?? '';
      await cris.get(node)?.stopContainer(id.replace('containerd://', ''), 0);
    }
    const already = await completedCrr(crrs, ns, 'already');
    expect(already.status?.containerRecreateStates).toEqual([{ name: 'main', phase: 'Succeeded' }]);
    expect(statusOf(await pods.get(ns, 'already'), 'main').restartCount).toBe(1);
    expect(await podEvents(events, ns, 'already', 'Killing')).toHaveLength(0);

    // The second stop within seconds meets the kubelet's crash back-off (10 s).
    const forced = await completedCrr(crrs, ns, 'forced', 90_000);
    expect(forced.status?.containerRecreateStates).toEqual([{ name: 'main', phase: 'Succeeded', isKilled: true }]);
    expect(statusOf(await pods.get(ns, 'forced'), 'main').restartCount).toBe(2);
    expect(await podEvents(events, ns, 'forced', 'Killing')).toHaveLength(1);
  }, 150_000);

  it('waits minStartedSeconds of the new container before success', async () => {
    await startPod(podSpec(ns, 'min-started', node1, [container('main', termHandling())]));
    await crrs.create(crrSpec(ns, 'min-started', 'min-started', ['main'], { minStartedSeconds: 6 }));
    await eventually(async () => expect((await crrs.get(ns, 'min-started')).status?.containerRecreateStates?.[0]?.isKilled).toBe(true), 20_000);
    const done = await completedCrr(crrs, ns, 'min-started');
    const started = Date.parse(String(statusOf(await pods.get(ns, 'min-started'), 'main').state?.running?.startedAt));
    // Whole seconds on both sides.
    expect(Date.parse(done.status?.completionTime ?? '') - started).toBeGreaterThanOrEqual(5_000);
  });

  it('runs two CRRs of one pod strictly in order, the second starting as soon as the first completes', async () => {
    await startPod(podSpec(ns, 'two', node2, [container('a', termHandling()), container('b', ignoresTerm)], { grace: 3 }));
    const log = await PhaseLog.start();
    try {
      await crrs.create(crrSpec(ns, 'two-first', 'two', ['b']));
      await crrs.create(crrSpec(ns, 'two-second', 'two', ['a']));
      const first = await completedCrr(crrs, ns, 'two-first');
      const second = await completedCrr(crrs, ns, 'two-second');
      expect(first.status?.containerRecreateStates?.[0]?.phase).toBe('Succeeded');
      expect(second.status?.containerRecreateStates?.[0]?.phase).toBe('Succeeded');
      await eventually(() => expect(log.index('two-second', 'Completed')).toBeGreaterThanOrEqual(0), 5_000);
      expect(log.index('two-second', 'Pending')).toBeGreaterThanOrEqual(0);
      expect(log.index('two-second', 'Recreating')).toBeGreaterThan(log.index('two-first', 'Completed'));
      // Started at once: the pod's next CRR does not wait for a resync or a timer.
      const gap = (log.seen[log.index('two-second', 'Recreating')]?.at ?? 0) - (log.seen[log.index('two-first', 'Completed')]?.at ?? 0);
      expect(gap).toBeLessThan(2_000);
    } finally {
      await log.stop();
    }
  });

  it('runs CRRs of different pods in parallel', async () => {
    const names = ['par-0', 'par-1', 'par-2', 'par-3', 'par-4', 'par-5'];
    await Promise.all(names.map((n, i) => pods.create(podSpec(ns, n, i % 2 === 0 ? node1 : node2, [container('main', ignoresTerm)], { grace: 4 }))));
    for (const n of names) await runningPod(pods, ns, n);
    const log = await PhaseLog.start();
    try {
      await Promise.all(names.map((n) => crrs.create(crrSpec(ns, n, n, ['main']))));
      for (const n of names) await completedCrr(crrs, ns, n);
      // Every stop takes its 4 s grace; all six were under way at the same moment.
      let most = 0;
      const active = new Set<string>();
      for (const s of log.seen) {
        if (s.phase === 'Recreating') active.add(s.name);
        if (s.phase === 'Completed') active.delete(s.name);
        most = Math.max(most, active.size);
      }
      expect(most).toBe(names.length);
    } finally {
      await log.stop();
    }
  });

  it('stops a container without waiting for the write that records the stop; with forceRecreate only once it is recorded', async () => {
    // The daemon's API calls go through a proxy that holds every CRR status write for 8 s, as a
    // burst of CRRs on a node holds them under the daemon's 5 QPS budget.
    const HOLD_MS = 8_000;
    await startPod(podSpec(ns, 'held', node2, [container('main', termHandling())]));
    await startPod(podSpec(ns, 'held-forced', node2, [container('main', termHandling())]));
    const proxy = await startProxy();
    await stopInstalledDaemon(env, node2, 'SIGTERM');
    const node = env.nodes[1];
    const daemon = spawnDaemon(node2, proxy.kubeconfig(env.kubeconfig), node?.criSocket ?? '');
    try {
      proxy.delay(HOLD_MS, { method: 'PUT', path: /\/containerrecreaterequests\/[^/]+\/status$/ });
      const restartedAfter = async (pod: string, t0: number): Promise<number> => {
        await eventually(async () => expect(statusOf(await pods.get(ns, pod), 'main').restartCount).toBe(1), 40_000, 100);
        return Date.now() - t0;
      };
      const t0 = Date.now();
      await crrs.create(crrSpec(ns, 'held', 'held', ['main']));
      // Stopped, and restarted by the kubelet, while the record of the stop is still held.
      expect(await restartedAfter('held', t0)).toBeLessThan(HOLD_MS);
      const t1 = Date.now();
      await crrs.create(crrSpec(ns, 'held-forced', 'held-forced', ['main'], { forceRecreate: true }));
      expect(await restartedAfter('held-forced', t1)).toBeGreaterThanOrEqual(HOLD_MS);
      proxy.delay(0);
      for (const name of ['held', 'held-forced']) {
        const done = await completedCrr(crrs, ns, name, 60_000);
        expect(done.status?.containerRecreateStates).toEqual([{ name: 'main', phase: 'Succeeded', isKilled: true }]);
        expect(statusOf(await pods.get(ns, name), 'main').restartCount).toBe(1);
      }
    } finally {
      if (daemon.exitCode === null) {
        const exited = new Promise((r) => daemon.once('exit', r));
        daemon.kill('SIGTERM');
        await exited;
      }
      await proxy.stop();
      await startInstalledDaemon(env, node2);
    }
  });

  it('resumes after a daemon crash mid-stop, without stopping the container twice', async () => {
    await startPod(podSpec(ns, 'crash', node2, [container('main', ignoresTerm)], { grace: 8 }));
    await crrs.create(crrSpec(ns, 'crash', 'crash', ['main']));
    await eventually(async () => expect((await crrs.get(ns, 'crash')).status?.containerRecreateStates?.[0]?.message).toMatch(/^stopping container/), 20_000, 50);
    await stopInstalledDaemon(env, node2, 'SIGKILL');
    try {
      // Cut off, the runtime gives up the stop: the container keeps running.
      await new Promise((r) => setTimeout(r, 1_000));
      const during = await crrs.get(ns, 'crash');
      expect(during.status?.phase).toBe('Recreating');
    } finally {
      await startInstalledDaemon(env, node2);
    }
    const done = await completedCrr(crrs, ns, 'crash', 60_000);
    expect(done.status?.containerRecreateStates).toEqual([{ name: 'main', phase: 'Succeeded', isKilled: true }]);
    // Had the restarted daemon stopped the new instance, the count would be 2 (after a back-off).
    await new Promise((r) => setTimeout(r, 3_000));
    const after = await pods.get(ns, 'crash');
    expect(statusOf(after, 'main').restartCount).toBe(1);
    expect(statusOf(after, 'main').state?.running).toBeDefined();
  });
});
