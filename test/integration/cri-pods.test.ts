import { CriClient } from '../../daemon/cri/client.js';
import { killContainer } from '../../daemon/crr/kill.js';
import { observeContainers } from '../../daemon/crr/observe.js';
import { EventRecorder } from '../../kube/events.js';
import { componentLogger } from '../../kube/log.js';
import { testEnv } from '../helpers/env.js';
import { hostNetworkSandbox, removeSandbox, runContainer } from '../helpers/cri.js';
import { eventually, restClient } from '../helpers/kube.js';

const env = testEnv();
const cri = new CriClient(env.criSocket);
const busybox = `${env.registryOpen}/busybox:1.0`;
let sandboxId = '';
const sandbox = hostNetworkSandbox(env, 'cri-pods');

beforeAll(async () => {
  await cri.pullImage(busybox, undefined, undefined);
  sandboxId = (await cri.runtime('RunPodSandbox', { config: sandbox })).pod_sandbox_id;
});
afterAll(async () => {
  if (sandboxId) await removeSandbox(cri, sandboxId);
  cri.close();
});

describe('CRI runtime service with a host-network pod on real containerd', () => {
  it('lists the sandbox by label', async () => {
    const res = await cri.runtime('ListPodSandbox', { filter: { label_selector: { app: 'cri-pods' } } });
    expect(res.items.map((i) => i.id)).toContain(sandboxId);
    expect(res.items.find((i) => i.id === sandboxId)?.state).toBe('SANDBOX_READY');
  });

  it("observes each pod's own containers among other pods' of the same name, and sees a stop at once", async () => {
    const other = hostNetworkSandbox(env, 'cri-pods-other');
    const otherId = (await cri.runtime('RunPodSandbox', { config: other })).pod_sandbox_id;
    try {
      const mine = await runContainer(cri, sandboxId, sandbox, 'listed', busybox, ['/bin/sleep', 'infinity']);
      const theirs = await runContainer(cri, otherId, other, 'listed', busybox, ['/bin/sleep', 'infinity']);
      const uid = (s: typeof sandbox): string => s.labels?.['io.kubernetes.pod.uid'] ?? '';
      const seen = await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const [s, id] = i % 2 === 0 ? [sandbox, mine] : [other, theirs];
          return observeContainers(cri, uid(s), new Map([['listed', id]]));
        }),
      );
      expect(seen.map((m) => m.get('listed')?.id)).toEqual(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? mine : theirs)));
      expect(seen.every((m) => m.get('listed')?.running === true && m.size === 1)).toBe(true);
      // A running instance other than the CRR's original has its start time read only when asked for
      // (minStartedSeconds): the one ContainerStatus call an observation may add.
      const replaced = new Map([['listed', 'the-original']]);
      expect((await observeContainers(cri, uid(sandbox), replaced)).get('listed')?.startedAtMs).toBeUndefined();
      const startedAtMs = (await observeContainers(cri, uid(sandbox), replaced, { startTimes: true })).get('listed')?.startedAtMs ?? 0;
      expect(Math.abs(Date.now() - startedAtMs)).toBeLessThan(60_000);
      await cri.stopContainer(mine, 0);
      const after = await observeContainers(cri, uid(sandbox), new Map([['listed', mine]]));
      expect(after.get('listed')).toMatchObject({ id: mine, running: false });
    } finally {
      await removeSandbox(cri, otherId);
    }
  });

  it('stops a TERM-ignoring container after the grace period with exit 137', async () => {
    const id = await runContainer(cri, sandboxId, sandbox, 'ignores-term', busybox, ['/bin/sleep', 'infinity']);
    expect((await cri.runtime('ContainerStatus', { container_id: id })).status?.state).toBe('CONTAINER_RUNNING');
    // runc reports a container started just before its init process execs the command. A TERM in
    // that window reaches runc's init, a Go program, which as the namespace's pid 1 cannot die of a
    // re-raised signal and exits 2 (Go's runtime, dieFromSignal): the exit 2 seen once in CI.
    await eventually(async () => {
      const res = await cri.runtime('ExecSync', { container_id: id, cmd: ['/bin/cat', '/proc/1/comm'], timeout: '5' });
      expect(Buffer.from(res.stdout).toString().trim()).toBe('sleep');
    }, 10_000, 50);
    const t0 = Date.now();
    await cri.stopContainer(id, 2);
    const took = Date.now() - t0;
    const st = (await cri.runtime('ContainerStatus', { container_id: id })).status;
    expect(st?.state).toBe('CONTAINER_EXITED');
    expect(st?.exit_code).toBe(137);
    expect(took).toBeGreaterThanOrEqual(1900);
  });

  it('stops a TERM-trapping container at once with exit 0', async () => {
    const id = await runContainer(cri, sandboxId, sandbox, 'traps-term', busybox, [
      '/bin/sh',
      '-c',
      'trap "echo got TERM; exit 0" TERM; while true; do sleep 0.1; done',
    ]);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    await cri.stopContainer(id, 10);
    const took = Date.now() - t0;
    const st = (await cri.runtime('ContainerStatus', { container_id: id })).status;
    expect(st?.exit_code).toBe(0);
    expect(took).toBeLessThan(5000);
  });

  it('runs ExecSync and returns output and exit code', async () => {
    const id = await runContainer(cri, sandboxId, sandbox, 'exec-target', busybox, ['/bin/sleep', 'infinity']);
    const ok = await cri.runtime('ExecSync', { container_id: id, cmd: ['/bin/sh', '-c', 'echo hello; echo err >&2'], timeout: '10' });
    expect(ok.exit_code).toBe(0);
    expect(Buffer.from(ok.stdout).toString()).toBe('hello\n');
    expect(Buffer.from(ok.stderr).toString()).toBe('err\n');
    const fail = await cri.runtime('ExecSync', { container_id: id, cmd: ['/bin/sh', '-c', 'exit 3'], timeout: '10' });
    expect(fail.exit_code).toBe(3);
    const listed = await cri.runtime('ListContainers', { filter: { pod_sandbox_id: sandboxId, label_selector: { 'io.kubernetes.container.name': 'exec-target' } } });
    expect(listed.containers.map((c) => c.id)).toEqual([id]);
    await cri.stopContainer(id, 0);
    await cri.runtime('RemoveContainer', { container_id: id });
  });

  it('reports NOT_FOUND for an unknown container', async () => {
    await expect(cri.stopContainer('does-not-exist', 0)).rejects.toMatchObject({ kind: 'not-found' });
  });

  it("a CRR's stop of an instance that exited, or that the runtime removed since it was listed, is done at once, not a failure", async () => {
    const rest = restClient();
    const deps = {
      cri,
      events: new EventRecorder(rest, { component: 'kruise-daemon-test' }),
      pod: { name: 'cri-pods', namespace: 'kruise-ts-test', uid: sandbox.metadata?.uid ?? '' },
      crrName: 'r',
      podAddress: async () => '127.0.0.1',
      log: componentLogger('crr-test'),
    };
    try {
      const id = await runContainer(cri, sandboxId, sandbox, 'named-by-crr', busybox, ['/bin/sleep', 'infinity']);
      await cri.stopContainer(id, 0);
      const target = { name: 'named-by-crr', containerId: id, graceSeconds: 30, container: { name: 'named-by-crr' } };
      const t0 = Date.now();
      expect(await killContainer(target, deps)).toBeUndefined();
      expect(Date.now() - t0).toBeLessThan(5_000);
      await cri.runtime('RemoveContainer', { container_id: id });
      expect(await killContainer(target, deps)).toBeUndefined();
      // Any other failure is still one.
      await expect(killContainer({ ...target, containerId: '' }, deps)).resolves.toMatch(/StopContainer/);
    } finally {
      await rest.close();
    }
  });
});
