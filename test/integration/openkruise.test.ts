import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import type { KubeObject } from '../../api/types/common.js';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';
import type { Pod } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import { DEFAULT_KRUISE_NAMESPACE } from '../../api/installation.js';
import { restartManager } from '../../hack/kruise.js';
import { apiVersionOf, core, Resource, type ResourceType } from '../../kube/resource.js';
import { updateWithRetry } from '../../kube/write.js';
import { completedCrr, container, crrSpec, podSpec, runningPod } from '../helpers/crr.js';
import { defaultServiceAccount } from '../../hack/wait.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, kruise, restClient } from '../helpers/kube.js';
import { installation } from '../helpers/manager.js';
import { fixtureFile, kubectl, OPENKRUISE_NAMESPACE, OpenKruiseWebhookStandIn, openKruiseObjects } from '../helpers/openkruise.js';

// kruise-ts beside OpenKruise v1.9 installed with KruiseDaemon=false: OpenKruise's own objects
// (test/fixtures/openkruise/v1.9.yaml) and a stand-in answering its webhook paths as its manager
// would. Shows why the split needs deploy/openkruise (OpenKruise's webhooks refuse the four kinds),
// that handover.sh and the Helm post-renderer remove exactly those webhooks, and that kruise-ts then
// runs a job and a CRR without changing a single OpenKruise object.
const env = clusterEnv();
const rest = restClient();
const root = join(import.meta.dirname, '..', '..');
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
const crrs = new Resource<ContainerRecreateRequest>(rest, kruise.crrs);
const pods = new Resource<Pod & KubeObject>(rest, core.pods);
type WebhookConfiguration = KubeObject & { webhooks?: Array<{ name: string; clientConfig: { caBundle?: string }; rules?: Array<{ resources?: string[] }> }> };
const configurations = [
  new Resource<WebhookConfiguration>(rest, core.mutatingwebhookconfigurations),
  new Resource<WebhookConfiguration>(rest, core.validatingwebhookconfigurations),
];
const configurationNames = ['kruise-mutating-webhook-configuration', 'kruise-validating-webhook-configuration'];
const fixture = openKruiseObjects();
const daemonKinds = new Set(['nodeimages', 'imagepulljobs', 'imagelistpulljobs', 'containerrecreaterequests']);
const coversDaemonKind = (w: { rules?: Array<{ resources?: string[] }> }): boolean => (w.rules ?? []).some((r) => (r.resources ?? []).some((x) => daemonKinds.has(x)));
const fixtureHooks = (kind: string): string[] => ((fixture.find((o) => o.kind === kind)?.['webhooks'] as Array<{ name: string; rules?: Array<{ resources?: string[] }> }>) ?? []).filter((w) => !coversDaemonKind(w)).map((w) => w.name);
const tools = { ...process.env, KUBECTL: env.kubectl, KUBECONFIG: env.kubeconfig };
let standIn: OpenKruiseWebhookStandIn;
let ns = '';

/** The resourceVersion of every object of OpenKruise's install: any write by anyone changes one. */
async function versions(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const o of fixture) {
    const [group, version] = (o.apiVersion ?? '').includes('/') ? (o.apiVersion ?? '').split('/') : ['', o.apiVersion ?? ''];
    const namespaced = o.metadata?.namespace !== undefined;
    const plural = `${(o.kind ?? '').toLowerCase()}s`;
    const type: ResourceType = { group: group ?? '', version: version ?? '', plural, kind: o.kind ?? '', namespaced };
    const live = await new Resource<KubeObject>(rest, type).get(o.metadata?.namespace, o.metadata?.name ?? '');
    out[`${apiVersionOf(type)} ${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`] = live.metadata?.resourceVersion ?? '';
  }
  return out;
}

beforeAll(async () => {
  ns = await createNamespace(rest, 'openkruise');
  standIn = await OpenKruiseWebhookStandIn.start();
  // `helm install` of OpenKruise v1.9 with KruiseDaemon=false, without kruise-ts's post-renderer,
  // and what its manager does once it runs: serve behind the webhook Service (its pod, here a
  // host-network placeholder in front of the stand-in), put its CA into both webhook configurations
  // and seed the `template` annotation it rebuilds them from. The configurations come last, with
  // the CA, so the cluster's pods never meet a webhook that cannot answer.
  const [hooks, others] = [fixture.filter((o) => configurationNames.includes(o.metadata?.name ?? '')), fixture.filter((o) => !configurationNames.includes(o.metadata?.name ?? ''))];
  kubectl(env.kubectl, env.kubeconfig, ['apply', '-f', '-'], others.map((o) => dump(o)).join('---\n'));
  await defaultServiceAccount(rest, OPENKRUISE_NAMESPACE);
  await pods.create({
    metadata: { name: 'kruise-manager-stand-in', namespace: OPENKRUISE_NAMESPACE, labels: { 'control-plane': 'controller-manager' } },
    spec: { ...podSpec(OPENKRUISE_NAMESPACE, 'x', env.nodes[0]?.name ?? '', [container('manager', ['sleep', 'infinity'])]).spec, terminationGracePeriodSeconds: 0 },
  } as Pod & KubeObject);
  await eventually(async () => {
    const ep = await new Resource<KubeObject & { subsets?: Array<{ addresses?: unknown[] }> }>(rest, { group: '', version: 'v1', plural: 'endpoints', kind: 'Endpoints', namespaced: true }).get(
      OPENKRUISE_NAMESPACE,
      'kruise-webhook-service',
    );
    if (!ep.subsets?.[0]?.addresses?.length) throw new Error('no endpoint yet');
  }, 60_000);
  const caBundle = Buffer.from(standIn.caPem).toString('base64');
  const seeded = hooks.map((c) => {
    const webhooks = c['webhooks'] as Array<{ clientConfig: object }>;
    return { ...c, metadata: { ...c.metadata, annotations: { template: JSON.stringify(webhooks) } }, webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle } })) };
  });
  kubectl(env.kubectl, env.kubeconfig, ['apply', '-f', '-'], seeded.map((o) => dump(o)).join('---\n'));
}, 120_000);

afterAll(async () => {
  // The webhooks go first: without the stand-in they would refuse every pod in the cluster.
  for (const [i, res] of configurations.entries()) await res.delete(undefined, configurationNames[i] ?? '').catch(() => undefined);
  await pods.delete(OPENKRUISE_NAMESPACE, 'kruise-manager-stand-in', { gracePeriodSeconds: 0 }).catch(() => undefined);
  kubectl(env.kubectl, env.kubeconfig, ['delete', '--ignore-not-found', '--wait=false', '-f', fixtureFile]);
  await standIn.stop();
  await deleteNamespace(rest, ns);
});

describe('kruise-ts beside OpenKruise v1.9 (KruiseDaemon=false)', () => {
  it("without deploy/openkruise, OpenKruise's webhooks refuse kruise-ts's kinds", async () => {
    const err = await jobs.create({ metadata: { name: 'refused', namespace: ns }, spec: { image: 'busybox:1.36', completionPolicy: { type: 'Always' } } }).catch((e: unknown) => e);
    expect(String(err)).toContain('feature-gate KruiseDaemon is not enabled');
  });

  it('handover.sh takes exactly those webhooks out of both configurations and their template, once', async () => {
    const first = execFileSync('bash', [join(root, 'deploy', 'openkruise', 'handover.sh')], { env: tools, encoding: 'utf8' });
    expect(first).toContain('taken out');
    for (const [i, res] of configurations.entries()) {
      const c = await res.get(undefined, configurationNames[i] ?? '');
      const expected = fixtureHooks(i === 0 ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration');
      expect((c.webhooks ?? []).map((w) => w.name)).toEqual(expected);
      expect((JSON.parse(c.metadata?.annotations?.['template'] ?? '[]') as Array<{ name: string }>).map((w) => w.name)).toEqual(expected);
      expect((c.webhooks ?? []).every((w) => w.clientConfig.caBundle !== undefined)).toBe(true);
    }
    const again = execFileSync('bash', [join(root, 'deploy', 'openkruise', 'handover.sh')], { env: tools, encoding: 'utf8' });
    expect(again).not.toContain('taken out');
  });

  it('the Helm post-renderer leaves them out of a fresh install, and changes nothing else', () => {
    const rendered = openKruiseObjects(execFileSync('bash', [join(root, 'deploy', 'openkruise', 'post-renderer.sh')], { env: tools, input: readFileSync(fixtureFile, 'utf8'), encoding: 'utf8' }));
    const key = (o: KubeObject): string => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
    expect(rendered.map(key).sort()).toEqual(fixture.map(key).sort());
    for (const o of rendered) {
      const original = fixture.find((f) => key(f) === key(o));
      if (o.kind === 'MutatingWebhookConfiguration' || o.kind === 'ValidatingWebhookConfiguration') {
        const hooks = o['webhooks'] as Array<{ name: string }>;
        expect(hooks.map((w) => w.name)).toEqual(fixtureHooks(o.kind));
        expect(hooks).toEqual((original?.['webhooks'] as Array<{ name: string }>).filter((w) => hooks.some((h) => h.name === w.name)));
      } else {
        expect(o).toEqual(original);
      }
    }
  });

  it('kruise-ts starts, pulls and recreates a container beside it without changing any OpenKruise object', async () => {
    const before = await versions();
    const callsBefore = standIn.calls.length;
    // kruise-ts's manager starts up again with OpenKruise in place (certificates, webhook
    // configurations, the CRR CRD's conversion): all of it on its own objects.
    await restartManager(env);

    const nodes = env.nodes.map((n) => n.name);
    await jobs.create({ metadata: { name: 'beside', namespace: ns }, spec: { image: `${env.registryOpen}/many-061:1.0`, selector: { names: nodes }, completionPolicy: { type: 'Always' } } });
    const job = await eventually(async () => {
      const j = await jobs.get(ns, 'beside');
      if (!j.status?.completionTime) throw new Error(`not completed: ${JSON.stringify(j.status)}`);
      return j;
    }, 120_000, 250);
    expect(job.status).toMatchObject({ desired: nodes.length, succeeded: nodes.length, failed: 0 });

    await pods.create(podSpec(ns, 'app', nodes[0] ?? '', [container('main', ['sleep', 'infinity'])]) as Pod & KubeObject);
    await runningPod(pods, ns, 'app');
    await crrs.create(crrSpec(ns, 'restart', 'app', ['main']));
    const crr = await completedCrr(crrs, ns, 'restart', 90_000);
    expect(crr.status?.containerRecreateStates).toEqual([expect.objectContaining({ name: 'main', phase: 'Succeeded' })]);

    // OpenKruise's pod webhooks saw the pod: it was live the whole time.
    expect(standIn.calls.slice(callsBefore)).toContain('/mutate-pod');
    expect(await versions()).toEqual(before);
  }, 240_000);

  it("stands back while OpenKruise's controllers for these kinds run, says so, and carries on once they stop", async () => {
    const deployments = new Resource<KubeObject & { spec?: { replicas?: number; template?: { spec?: { containers?: Array<{ args?: string[] }> } } } }>(rest, {
      group: 'apps',
      version: 'v1',
      plural: 'deployments',
      kind: 'Deployment',
      namespaced: true,
    });
    const health = installation().manager.healthPort;
    const readyz = async (): Promise<string> => (await fetch(`http://127.0.0.1:${health}/readyz`)).text();
    const setGates = (gates: string, replicas: number) =>
      updateWithRetry(deployments, OPENKRUISE_NAMESPACE, 'kruise-controller-manager', (d) => {
        const [c] = d.spec?.template?.spec?.containers ?? [];
        if (!c) return undefined;
        const args = [...(c.args ?? []).filter((a) => !a.startsWith('--feature-gates=')), `--feature-gates=${gates}`];
        return { ...d, spec: { ...d.spec, replicas, template: { ...d.spec?.template, spec: { ...d.spec?.template?.spec, containers: [{ ...c, args }] } } } };
      });
    // OpenKruise's manager with KruiseDaemon on (its default): its controllers would write the
    // same NodeImages, jobs and CRRs.
    await setGates('ImagePullJobGate=true', 1);
    try {
      await eventually(async () => expect(await readyz()).toContain('KruiseDaemon is on'), 45_000, 500);
      // /readyz says so at once; the event goes out after, as events wait behind every other call.
      await eventually(async () => {
        const events = await new Resource<KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } }>(rest, core.events).list(DEFAULT_KRUISE_NAMESPACE);
        expect(events.items.some((e) => e.reason === 'OpenKruiseConflict' && e.involvedObject?.name === 'kruise-ts-manager' && (e.message ?? '').includes('KruiseDaemon is on'))).toBe(true);
      });
      await jobs.create({ metadata: { name: 'waits', namespace: ns }, spec: { image: `${env.registryOpen}/many-062:1.0`, selector: { names: [env.nodes[0]?.name ?? ''] }, completionPolicy: { type: 'Always' } } });
      await new Promise((r) => setTimeout(r, 5_000));
      expect((await jobs.get(ns, 'waits')).status).toBeUndefined();
    } finally {
      await setGates('KruiseDaemon=false', 0);
    }
    await eventually(async () => expect(await readyz()).toBe('ok'), 45_000, 500);
    await eventually(async () => expect((await jobs.get(ns, 'waits')).status?.completionTime).toBeDefined(), 60_000, 500);
  }, 180_000);
});
