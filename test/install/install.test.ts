import { existsSync, readFileSync, renameSync, statSync } from 'node:fs';
import { DEFAULT_KRUISE_NAMESPACE, DEFAULT_LEADER_ELECTION_ID, DEFAULT_MANAGER_DEPLOYMENT, VALIDATING_WEBHOOK_CONFIGURATION } from '../../api/installation.js';
import type { KubeObject } from '../../api/types/common.js';
import type { Pod } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import { CriClient } from '../../daemon/cri/client.js';
import { core, Resource } from '../../kube/resource.js';
import { accessesFromAudit, check } from '../../hack/check-rbac.js';
import { deployDir, render } from '../../hack/kustomize.js';
import { buildImage, DAEMONSET, installationReady, installDir, kubectl, podsDown, podsUp, type PodEnv } from '../../hack/install-pods.js';
import { nodeImages, tagStatus } from '../helpers/daemon.js';
import { completedCrr, container, crrSpec, podSpec, resources, runningPod, statusOf, termHandling } from '../helpers/crr.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, kruise, restClient } from '../helpers/kube.js';
import { ThrottleProxy } from '../helpers/throttle.js';
import { join } from 'node:path';

// kruise-ts as users run it: the image built here, deploy/ applied with `kubectl apply -k` (the
// local overlay: host network, the image, each node's runtime socket), pods on real kubelets with
// their own ServiceAccount tokens, and the day-2 operations an operator performs on them. The cases
// run in order on one installation; the last one uninstalls it.
const env = clusterEnv() as ReturnType<typeof clusterEnv> & PodEnv;
const rest = restClient();
const { pods, crrs } = resources(rest);
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
const nis = nodeImages(rest);
const leases = new Resource<KubeObject & { spec?: { holderIdentity?: string; leaseDurationSeconds?: number } }>(rest, { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true });
const nodeNames = env.nodes.map((n) => n.name);
const BIG = 50 * 1024 * 1024;
let ns = '';
let image = '';
let slow: ThrottleProxy;
// The audit log from here on: a handed-in environment may hold an earlier run's uninstall.
let auditFrom = 0;

beforeAll(async () => {
  auditFrom = existsSync(env.auditLog) ? statSync(env.auditLog).size : 0;
  image = (await podsUp(env)).image;
  ns = await createNamespace(rest, 'install');
  slow = await ThrottleProxy.start(env.registryOpen, 700_000);
}, 600_000);
afterAll(async () => {
  await slow.stop();
  await deleteNamespace(rest, ns);
  await rest.close();
});

function systemPods(label: string): Promise<Pod[]> {
  return pods.list(DEFAULT_KRUISE_NAMESPACE, { labelSelector: `app.kubernetes.io/name=${label}` }).then((l) => l.items);
}

async function leaderPod(): Promise<string> {
  const holder = (await leases.get(DEFAULT_KRUISE_NAMESPACE, DEFAULT_LEADER_ELECTION_ID)).spec?.holderIdentity ?? '';
  return holder.slice(0, holder.lastIndexOf('_'));
}

/**
 * Removes an image from every node's containerd under any registry address (an earlier run's proxy
 * had another port), so that its layers are gone and the next pull is a real download.
 */
async function removeEverywhere(ref: string): Promise<void> {
  const path = ref.slice(ref.indexOf('/'));
  for (const n of env.nodes) {
    const cri = new CriClient(n.criSocket);
    try {
      const { images } = await cri.image('ListImages', {});
      for (const i of images ?? []) {
        if (i.repo_tags?.some((t) => t.endsWith(path))) await cri.image('RemoveImage', { image: { image: i.id } });
      }
    } finally {
      cri.close();
    }
  }
}

function pullJob(name: string, ref: string): ImagePullJob {
  return { metadata: { name, namespace: ns }, spec: { image: ref, parallelism: 2, completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 } } };
}

async function completedJob(name: string, timeoutMs: number): Promise<ImagePullJob> {
  return eventually(async () => {
    const j = await jobs.get(ns, name);
    if (!j.status?.completionTime) throw new Error(`job ${name} not completed: ${JSON.stringify(j.status)}`);
    return j;
  }, timeoutMs, 500);
}

async function pullingEverywhere(ref: string): Promise<void> {
  const [name, tag] = [ref.slice(0, ref.lastIndexOf(':')), ref.slice(ref.lastIndexOf(':') + 1)];
  await eventually(async () => {
    for (const n of nodeNames) expect(tagStatus(await nis.get(undefined, n), name, tag)?.phase).toBe('Pulling');
  }, 60_000, 250);
}

function isJsonObject(line: string): boolean {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
}

describe('kruise-ts installed with kubectl apply -k, as pods on real kubelets', () => {
  it('runs two manager replicas with one leader and a Ready daemon on every node, on their own ServiceAccount tokens', async () => {
    expect(await installationReady(rest, env.nodes.length)).toBe(true);
    const managers = await systemPods(DEFAULT_MANAGER_DEPLOYMENT);
    const daemons = await systemPods(DAEMONSET);
    expect(managers).toHaveLength(2);
    expect(daemons.map((p) => p.spec?.nodeName).sort()).toEqual([...nodeNames].sort());
    expect(managers.map((p) => p.metadata?.name)).toContain(await leaderPod());
    for (const p of [...managers, ...daemons]) {
      expect(p.spec?.containers[0]?.image).toBe(image);
      // In-cluster configuration only, no kubeconfig: the manager's token is the one the
      // ServiceAccount admission mounted; the daemon's is projected and bound to its pod (on 1.20
      // the mounted one is a Secret's, bound to nothing), which the own-node webhook needs.
      expect(p.spec?.serviceAccountName).toMatch(/^kruise-ts-(manager|daemon)$/);
      if (p.spec?.serviceAccountName === 'kruise-ts-manager') {
        expect(p.spec.volumes?.some((v) => v.secret?.secretName?.startsWith('kruise-ts-manager-token-'))).toBe(true);
      } else {
        expect(p.spec?.automountServiceAccountToken).toBe(false);
        expect(p.spec?.volumes?.some((v) => v.projected?.sources?.some((s) => s.serviceAccountToken?.path === 'token'))).toBe(true);
      }
      expect(JSON.stringify(p.spec?.containers)).not.toMatch(/kubeconfig/i);
      expect(p.status?.containerStatuses?.[0]?.ready).toBe(true);
    }
    // deploy/'s manager checks that each daemon writes only its node's status (the tests below
    // write NodeImage and CRR status through it).
    const validating = new Resource<KubeObject & { webhooks?: Array<{ name: string }> }>(rest, {
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      plural: 'validatingwebhookconfigurations',
      kind: 'ValidatingWebhookConfiguration',
      namespaced: false,
    });
    expect((await validating.get(undefined, VALIDATING_WEBHOOK_CONFIGURATION)).webhooks?.map((w) => w.name)).toContain('vdaemonownnode.kruise-ts.io');
  });

  it('rolls the DaemonSet to a new tag while a 50 MB pull and a CRR are in flight: the pull completes once, the container is recreated once', async () => {
    const next = buildImage(env, '0.1.1-roll');
    const ref = `${slow.address}/big:1.0`;
    await removeEverywhere(ref);
    const sentBefore = slow.sent;
    // preStop outlasts a daemon's replacement, so the CRR's daemon is replaced while it runs the hook.
    const node = nodeNames[0] ?? '';
    await pods.create(podSpec(ns, 'app', node, [container('app', termHandling(), { lifecycle: { preStop: { exec: { command: ['sleep', '45'] } } } })], { grace: 90 }));
    await runningPod(pods, ns, 'app');
    await jobs.create(pullJob('roll', ref));
    await crrs.create(crrSpec(ns, 'roll', 'app', ['app'], { minStartedSeconds: 1 }));
    await pullingEverywhere(ref);
    await eventually(async () => expect((await crrs.get(ns, 'roll')).status?.phase).toBe('Recreating'), 30_000, 250);

    const t0 = Date.now();
    kubectl(env, ['-n', DEFAULT_KRUISE_NAMESPACE, 'set', 'image', `daemonset/${DAEMONSET}`, `daemon=${next}`]);
    // What each node's work was when its new daemon pod appeared: still in flight.
    const seenAtReplacement = new Map<string, { pull: string | undefined; crr: string | undefined }>();
    await eventually(async () => {
      const ds = await systemPods(DAEMONSET);
      for (const p of ds) {
        const n = p.spec?.nodeName ?? '';
        // A new pod the scheduler has not bound yet has no node.
        if (n === '' || p.spec?.containers[0]?.image !== next || seenAtReplacement.has(n)) continue;
        seenAtReplacement.set(n, {
          pull: tagStatus(await nis.get(undefined, n), ref.slice(0, ref.lastIndexOf(':')), '1.0')?.phase,
          crr: n === node ? (await crrs.get(ns, 'roll')).status?.phase : undefined,
        });
      }
      expect(ds.map((p) => p.spec?.containers[0]?.image)).toEqual(nodeNames.map(() => next));
      expect(await installationReady(rest, env.nodes.length)).toBe(true);
    }, 180_000, 250);
    const rollSeconds = (Date.now() - t0) / 1000;
    expect(Object.fromEntries(seenAtReplacement)).toEqual(Object.fromEntries(nodeNames.map((n) => [n, { pull: 'Pulling', crr: n === node ? 'Recreating' : undefined }])));

    const job = await completedJob('roll', 240_000);
    expect(job.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0 });
    for (const n of nodeNames) expect(tagStatus(await nis.get(undefined, n), ref.slice(0, ref.lastIndexOf(':')), '1.0')).toMatchObject({ phase: 'Succeeded', progress: 100 });
    const crr = await completedCrr(crrs, ns, 'roll', 180_000);
    expect(crr.status?.phase).toBe('Completed');
    expect(statusOf(await pods.get(ns, 'app'), 'app').restartCount).toBe(1);
    // The registry sent each node its 50 MB once: a pull resumed by the new daemon, not redone.
    const sentMiB = (slow.sent - sentBefore) / 1048576;
    console.log(`DaemonSet roll over ${nodeNames.length} nodes: ${rollSeconds.toFixed(1)} s; the registry sent ${sentMiB.toFixed(1)} MiB for two 50 MiB pulls`);
    expect(slow.sent - sentBefore).toBeLessThan(2 * BIG * 1.5);
    // The pod has served; it goes now on a short grace. Deleted with the namespace at the uninstall,
    // its 90 s grace would hold that case's wait: this kubelet (1.20) keeps a deleted pod until its
    // grace period ends, even once its container has stopped (seen: 45 s preStop, gone at 90 s).
    await pods.delete(ns, 'app', { gracePeriodSeconds: 1 });
  }, 600_000);

  it('deleting the leader pod mid-job: the other replica takes over within the lease duration and the job completes with correct counts', async () => {
    const ref = `${slow.address}/big:1.0`;
    await removeEverywhere(ref);
    await jobs.create(pullJob('failover', ref));
    await pullingEverywhere(ref);
    const leader = await leaderPod();
    const others = (await systemPods(DEFAULT_MANAGER_DEPLOYMENT)).map((p) => p.metadata?.name).filter((n) => n !== leader);
    const duration = (await leases.get(DEFAULT_KRUISE_NAMESPACE, DEFAULT_LEADER_ELECTION_ID)).spec?.leaseDurationSeconds ?? 15;
    const t0 = Date.now();
    await pods.delete(DEFAULT_KRUISE_NAMESPACE, leader);
    const successor = await eventually(async () => {
      const now = await leaderPod();
      expect(others).toContain(now);
      return now;
    }, (duration + 10) * 1000, 200);
    const takeover = (Date.now() - t0) / 1000;
    console.log(`leader ${leader} deleted: ${successor} leads after ${takeover.toFixed(1)} s (lease ${duration} s)`);
    expect(takeover).toBeLessThan(duration + 2);
    const job = await completedJob('failover', 240_000);
    expect(job.status).toMatchObject({ desired: 2, active: 0, succeeded: 2, failed: 0 });
    // The Deployment replaced the deleted replica.
    await eventually(async () => expect(await installationReady(rest, env.nodes.length)).toBe(true), 120_000, 500);
  }, 600_000);

  it('a daemon whose runtime socket is gone is restarted by its liveness probe and resumes', async () => {
    const node = env.nodes[1] ?? env.nodes[0];
    if (!node) throw new Error('no nodes');
    const podOn = async (): Promise<Pod> => {
      const p = (await systemPods(DAEMONSET)).find((x) => x.spec?.nodeName === node.name);
      if (!p) throw new Error(`no daemon pod on ${node.name}`);
      return p;
    };
    const before = await podOn();
    const restarts = before.status?.containerStatuses?.[0]?.restartCount ?? 0;
    const away = `${node.criSocket}.away`;
    renameSync(node.criSocket, away);
    try {
      await eventually(async () => expect((await podOn()).status?.containerStatuses?.[0]?.restartCount ?? 0).toBeGreaterThan(restarts), 150_000, 1000);
    } finally {
      renameSync(away, node.criSocket);
    }
    // The same pod, restarted in place, Ready again once its runtime is back.
    await eventually(async () => {
      const p = await podOn();
      expect(p.metadata?.uid).toBe(before.metadata?.uid);
      expect(p.status?.containerStatuses?.[0]?.ready).toBe(true);
    }, 180_000, 1000);
    const ref = `${env.registryOpen}/busybox:1.1`;
    await removeEverywhere(ref);
    await jobs.create({ ...pullJob('after-restart', ref), spec: { ...pullJob('after-restart', ref).spec, selector: { names: [node.name] } } });
    expect((await completedJob('after-restart', 120_000)).status).toMatchObject({ desired: 1, succeeded: 1, failed: 0 });
  }, 600_000);

  it("check-rbac: what the pods called with their ServiceAccount tokens (the API server's audit log) is all granted by deploy/ and none refused", () => {
    const { accesses, forbidden } = accessesFromAudit(readFileSync(env.auditLog).subarray(auditFrom).toString('utf8').split('\n'));
    const { refused } = check(render(join(deployDir(), 'base')), accesses);
    expect(forbidden).toEqual([]);
    expect(refused).toEqual([]);
    expect(new Set(accesses.map((a) => a.identity))).toEqual(new Set(['manager', 'daemon']));
    for (const resource of ['nodeimages/status', 'imagepulljobs/status', 'containerrecreaterequests/status', 'leases']) expect(accesses.map((a) => a.resource)).toContain(resource);
  });

  it('every line the pods logged is a JSON object (what a log pipeline parses)', async () => {
    // The test cluster's kubelets share the host's /var/log/pods, and each one's container GC removes
    // the log directories of pods it does not run within a minute (it takes them for deleted). So the
    // pods start afresh and their logs are read at once, start-up lines included; a pod whose log is
    // already gone is read in the next round.
    const read = new Map<string, string[]>();
    // Read from its start means "started" is among the lines: a log cut short by that GC (read
    // while it went) counts as not read, and the next round restarts the pods again.
    const fromStart = (kind: string): boolean => (read.get(kind) ?? []).some((l) => l.includes('"message":"started"'));
    for (let round = 0; round < 5 && !(fromStart('manager') && fromStart('daemon')); round++) {
      const restartedAt = Date.now() - 1000;
      kubectl(env, ['-n', DEFAULT_KRUISE_NAMESPACE, 'rollout', 'restart', `deployment/${DEFAULT_MANAGER_DEPLOYMENT}`, `daemonset/${DAEMONSET}`]);
      const fresh = async (label: string): Promise<Pod[]> =>
        (await systemPods(label)).filter((p) => p.metadata?.deletionTimestamp === undefined && Date.parse(String(p.metadata?.creationTimestamp)) >= restartedAt);
      await eventually(async () => {
        expect(await installationReady(rest, env.nodes.length)).toBe(true);
        expect((await fresh(DEFAULT_MANAGER_DEPLOYMENT)).length + (await fresh(DAEMONSET)).length).toBe(2 + env.nodes.length);
      }, 180_000, 500);
      for (const [kind, label] of [['manager', DEFAULT_MANAGER_DEPLOYMENT], ['daemon', DAEMONSET]] as const) {
        for (const p of await fresh(label)) {
          const lines = kubectl(env, ['-n', DEFAULT_KRUISE_NAMESPACE, 'logs', p.metadata?.name ?? '']).split('\n').filter((l) => l !== '');
          if (lines.length === 1 && lines[0]?.startsWith('failed to try resolving symlinks in path "/var/log/pods/')) continue;
          read.set(kind, [...(read.get(kind) ?? []), ...lines.map((l) => `${p.metadata?.name}: ${l}`)]);
        }
      }
    }
    const all = [...(read.get('manager') ?? []), ...(read.get('daemon') ?? [])];
    expect(all.filter((l) => !isJsonObject(l.slice(l.indexOf(': ') + 2)))).toEqual([]);
    // Both binaries were read, each from its start.
    for (const kind of ['manager', 'daemon']) expect({ kind, fromStart: fromStart(kind) }).toEqual({ kind, fromStart: true });
  }, 600_000);

  it('kubectl delete -k removes everything it created', async () => {
    await deleteNamespace(rest, ns);
    await eventually(() => pods.list(ns).then((l) => expect(l.items).toEqual([])), 120_000, 1000);
    podsDown(env);
    expect(kubectl(env, ['get', '-k', installDir(env), '--ignore-not-found', '-o', 'name']).trim()).toBe('');
    expect(await new Resource<KubeObject>(rest, core.namespaces).get(undefined, DEFAULT_KRUISE_NAMESPACE).catch(() => undefined)).toBeUndefined();
  }, 300_000);
});
