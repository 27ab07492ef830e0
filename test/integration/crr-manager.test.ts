import type { Pod } from '../../api/types/core.js';
import {
  CONDITION_KRUISE_POD_READY,
  FINALIZER_CRR_UNREADY_ACQUIRED,
  LABEL_CRR_ACTIVE,
  LABEL_CRR_NODE_NAME,
  LABEL_CRR_POD_UID,
} from '../../api/metadata-keys.js';
import { MESSAGE_CRR_DEADLINE_EXCEEDED, MESSAGE_CRR_POD_GONE } from '../../api/messages.js';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';
import { ApiError } from '../../kube/rest.js';
import { completedCrr, container, crrSpec, markKruisePodReady, podSpec, readyOf, ignoresTerm, resources, runningPod, statusOf, termHandling } from '../helpers/crr.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient } from '../helpers/kube.js';
import { unreadyAcquiredAt } from '../../api/crr-conversion.js';

// The manager's half of CRRs (admission webhook and controller) against the real cluster, with the
// installation's daemons executing.
const env = clusterEnv();
const rest = restClient();
const { pods, crrs } = resources(rest);
const [node1, node2] = env.nodes.map((n) => n.name) as [string, string];
let ns = '';

beforeAll(async () => {
  ns = await createNamespace(rest, 'crrmgr');
});
afterAll(async () => {
  await deleteNamespace(rest, ns);
  await rest.close();
});

async function startPod(p: Pod): Promise<Pod> {
  await pods.create(p);
  return runningPod(pods, ns, p.metadata?.name ?? '');
}

async function gatedPod(name: string, node: string): Promise<Pod> {
  await pods.create(podSpec(ns, name, node, [container('main', termHandling())], { gate: true }));
  await eventually(async () => expect((await pods.get(ns, name)).status?.containerStatuses?.[0]?.ready).toBe(true), 60_000, 200);
  await markKruisePodReady(pods, ns, name);
  return eventually(async () => {
    const p = await pods.get(ns, name);
    expect(readyOf(p)).toBe('True');
    return p;
  }, 20_000, 200);
}

async function rejection(crr: ContainerRecreateRequest): Promise<string> {
  try {
    await crrs.create(crr);
  } catch (err) {
    if (err instanceof ApiError) return err.message;
    throw err;
  }
  throw new Error(`${crr.metadata?.name} was admitted`);
}

describe('ContainerRecreateRequest admission', () => {
  beforeAll(async () => {
    await startPod(podSpec(ns, 'target', node1, [container('main', termHandling())]));
  });

  it('binds an admitted CRR to the pod: labels, defaults, snapshot of the container', async () => {
    const pod = await pods.get(ns, 'target');
    const created = await crrs.create(crrSpec(ns, 'admitted', 'target', ['main'], {}, { activeDeadlineSeconds: 3 }));
    expect(created.metadata?.labels).toMatchObject({ [LABEL_CRR_NODE_NAME]: node1, [LABEL_CRR_POD_UID]: pod.metadata?.uid, [LABEL_CRR_ACTIVE]: 'true' });
    expect(created.spec.strategy).toMatchObject({ failurePolicy: 'Fail', terminationGracePeriodSeconds: 2 });
    expect(created.spec.containers[0]?.statusContext).toEqual({ containerID: statusOf(pod, 'main').containerID, restartCount: 0 });
  });

  it('rejects invalid CRRs with their reasons', async () => {
    expect(await rejection(crrSpec(ns, 'r1', 'nope', ['main']))).toContain('pod "nope" not found');
    expect(await rejection(crrSpec(ns, 'r2', 'target', ['nope']))).toContain('container "nope" not found in pod "target"');
    expect(await rejection(crrSpec(ns, 'r3', 'target', ['main', 'main']))).toContain('duplicate container "main"');
    expect(await rejection(crrSpec(ns, 'r4', 'target', ['main'], {}, { activeDeadlineSeconds: 2 }))).toContain('spec.activeDeadlineSeconds');
    const userContext = crrSpec(ns, 'r5', 'target', ['main']);
    userContext.spec.containers = [{ name: 'main', statusContext: { containerID: 'containerd://x', restartCount: 0 } }];
    expect(await rejection(userContext)).toContain('spec.containers[0].statusContext: must not be set');
  });

  it('rejects spec changes after creation', async () => {
    const c = await crrs.create(crrSpec(ns, 'frozen', 'target', ['main'], { unreadyGracePeriodSeconds: 60 }));
    await expect(crrs.update({ ...c, spec: { ...c.spec, activeDeadlineSeconds: 100 } })).rejects.toThrow(/spec: field is immutable/);
    await crrs.delete(ns, 'frozen');
  });
});

describe('ContainerRecreateRequest manager', () => {
  it('holds a pod with the KruisePodReady gate not ready for unreadyGracePeriodSeconds, then gives readiness back', async () => {
    await gatedPod('unready', node2);
    const t0 = Date.now();
    await crrs.create(crrSpec(ns, 'unready', 'unready', ['main'], { unreadyGracePeriodSeconds: 4 }));
    const during = await eventually(async () => {
      const p = await pods.get(ns, 'unready');
      expect(readyOf(p)).toBe('False');
      return p;
    }, 20_000, 100);
    const gate = during.status?.conditions?.find((c) => c.type === CONDITION_KRUISE_POD_READY);
    expect(gate?.status).toBe('False');
    expect(JSON.parse(gate?.message ?? '[]')).toEqual([{ userAgent: 'ContainerRecreateRequest', key: `${ns}/unready` }]);
    // Not ready before the kill: the container is still the first one.
    expect(statusOf(during, 'main').restartCount).toBe(0);
    // The pod is held first, then the moment is recorded (from which the daemon counts the grace).
    const held = await eventually(async () => {
      const c = await crrs.get(ns, 'unready');
      expect(unreadyAcquiredAt(c)).toBeDefined();
      return c;
    }, 10_000, 100);
    expect(held.metadata?.finalizers).toContain(FINALIZER_CRR_UNREADY_ACQUIRED);

    const done = await completedCrr(crrs, ns, 'unready');
    expect(done.status?.containerRecreateStates?.[0]?.phase).toBe('Succeeded');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4_000);
    const after = await eventually(async () => {
      const p = await pods.get(ns, 'unready');
      expect(readyOf(p)).toBe('True');
      return p;
    }, 20_000, 100);
    expect(after.status?.conditions?.find((c) => c.type === CONDITION_KRUISE_POD_READY)?.status).toBe('True');
    expect(statusOf(after, 'main').restartCount).toBe(1);
    await eventually(async () => expect((await crrs.get(ns, 'unready')).metadata?.finalizers ?? []).not.toContain(FINALIZER_CRR_UNREADY_ACQUIRED), 20_000);
  });

  it('gives readiness back when the CRR is deleted during the unready grace', async () => {
    await gatedPod('deleted-mid', node1);
    await crrs.create(crrSpec(ns, 'deleted-mid', 'deleted-mid', ['main'], { unreadyGracePeriodSeconds: 60 }));
    await eventually(async () => expect(readyOf(await pods.get(ns, 'deleted-mid'))).toBe('False'), 20_000, 100);
    await eventually(async () => expect((await crrs.get(ns, 'deleted-mid')).metadata?.finalizers).toContain(FINALIZER_CRR_UNREADY_ACQUIRED), 20_000);
    await crrs.delete(ns, 'deleted-mid');
    const after = await eventually(async () => {
      const p = await pods.get(ns, 'deleted-mid');
      expect(readyOf(p)).toBe('True');
      return p;
    }, 20_000, 100);
    await eventually(async () => {
      await expect(crrs.get(ns, 'deleted-mid')).rejects.toMatchObject({ status: 404 });
    }, 20_000);
    expect(statusOf(after, 'main').restartCount).toBe(0);
  });

  it('completes at activeDeadlineSeconds with untouched containers Failed, the one being stopped recreated, and starts no kill after it', async () => {
    // Ordered: b only after a is back. a ignores TERM and takes its whole 6 s grace to stop, so the
    // 4 s deadline passes during a's stop; b must never be touched.
    await startPod(podSpec(ns, 'deadline', node2, [container('a', ignoresTerm), container('b', termHandling())], { grace: 6 }));
    await crrs.create(crrSpec(ns, 'deadline', 'deadline', ['a', 'b'], { orderedRecreate: true }, { activeDeadlineSeconds: 4 }));
    const done = await completedCrr(crrs, ns, 'deadline', 30_000);
    expect(done.status?.message).toBe(MESSAGE_CRR_DEADLINE_EXCEEDED);
    // a's stop had begun: the status says what became of it (upstream says Failed).
    expect(done.status?.containerRecreateStates).toEqual([
      { name: 'a', phase: 'Succeeded', isKilled: true },
      { name: 'b', phase: 'Failed', message: MESSAGE_CRR_DEADLINE_EXCEEDED },
    ]);
    const took = Date.parse(done.status?.completionTime ?? '') - Date.parse(String(done.metadata?.creationTimestamp));
    // After the stop's 6 s grace and the kubelet's restart, not at the 4 s deadline.
    expect(took).toBeGreaterThanOrEqual(6_000);
    expect(took).toBeLessThan(20_000);
    // The stop under way finishes and the kubelet brings a back; then b would be next.
    const back = await eventually(async () => {
      const p = await pods.get(ns, 'deadline');
      expect(statusOf(p, 'a').restartCount).toBe(1);
      expect(statusOf(p, 'a').ready).toBe(true);
      return p;
    }, 30_000, 200);
    expect(statusOf(back, 'b').restartCount).toBe(0);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(statusOf(await pods.get(ns, 'deadline'), 'b').restartCount).toBe(0);
  });

  it('deletes a completed CRR after ttlSecondsAfterFinished, with its active label gone before', async () => {
    await startPod(podSpec(ns, 'ttl', node1, [container('main', termHandling())]));
    await crrs.create(crrSpec(ns, 'ttl', 'ttl', ['main'], {}, { ttlSecondsAfterFinished: 4 }));
    const done = await completedCrr(crrs, ns, 'ttl');
    const completedAt = Date.now();
    await eventually(async () => expect((await crrs.get(ns, 'ttl')).metadata?.labels?.[LABEL_CRR_ACTIVE]).toBeUndefined(), 10_000);
    await eventually(async () => {
      await expect(crrs.get(ns, 'ttl')).rejects.toMatchObject({ status: 404 });
    }, 30_000, 200);
    expect(Date.now() - completedAt).toBeGreaterThanOrEqual(2_000);
    expect(done.status?.containerRecreateStates?.[0]?.phase).toBe('Succeeded');
  });

  it('completes the CRR with "pod has gone" when the pod is deleted mid-way', async () => {
    await startPod(podSpec(ns, 'gone', node2, [container('main', termHandling())]));
    await crrs.create(crrSpec(ns, 'gone', 'gone', ['main'], { unreadyGracePeriodSeconds: 60 }));
    await eventually(async () => expect((await crrs.get(ns, 'gone')).status?.phase).toBe('Recreating'), 20_000);
    await pods.delete(ns, 'gone');
    const done = await completedCrr(crrs, ns, 'gone', 30_000);
    expect(done.status?.message).toBe(MESSAGE_CRR_POD_GONE);
    expect(done.status?.containerRecreateStates).toEqual([{ name: 'main', phase: 'Failed', message: MESSAGE_CRR_POD_GONE }]);
  });
});
