import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deployWebhookConfigurations } from '../../manager/webhook/configurations.js';
import { check, grants, type Access } from '../../hack/check-rbac.js';
import { DAEMON_V8_FLAGS, MANAGER_V8_FLAGS } from '../../hack/v8-flags.js';
import { memoryBytes, podMemoryLimit } from '../../hack/pod-memory.js';
import { deployDir, render, type Rendered } from '../../hack/kustomize.js';

const all = render(deployDir());
const withoutPolicy = render(join(deployDir(), 'without-policy'));
const find = (objs: Rendered[], kind: string, name: string): Rendered => {
  const o = objs.find((x) => x.kind === kind && x.metadata?.name === name);
  if (!o) throw new Error(`${kind} ${name} not rendered`);
  return o;
};
type Spec = Record<string, unknown>;
const podSpec = (o: Rendered): Spec => ((o['spec'] as Spec)['template'] as Spec)['spec'] as Spec;
const container = (o: Rendered): Spec => (podSpec(o)['containers'] as Spec[])[0] ?? {};

describe('deploy/ (kubectl apply -k deploy/)', () => {
  it('installs namespaces, CRDs, accounts, workloads, webhook and policy', () => {
    const kinds = all.map((o) => `${o.kind}/${o.metadata?.name}`);
    for (const k of [
      'Namespace/kruise-ts-system',
      'Namespace/kruise-ts-daemon-config',
      'CustomResourceDefinition/nodeimages.apps.kruise.io',
      'CustomResourceDefinition/imagepulljobs.apps.kruise.io',
      'CustomResourceDefinition/imagelistpulljobs.apps.kruise.io',
      'CustomResourceDefinition/containerrecreaterequests.apps.kruise.io',
      'ServiceAccount/kruise-ts-manager',
      'ServiceAccount/kruise-ts-daemon',
      'Deployment/kruise-ts-manager',
      'Service/kruise-ts-webhook',
      'PodDisruptionBudget/kruise-ts-manager',
      'DaemonSet/kruise-ts-daemon',
      'MutatingWebhookConfiguration/kruise-ts-mutating-webhook-configuration',
      'ValidatingWebhookConfiguration/kruise-ts-validating-webhook-configuration',
      'ValidatingAdmissionPolicy/kruise-ts-daemon-own-node',
      'ValidatingAdmissionPolicyBinding/kruise-ts-daemon-own-node',
    ]) {
      expect(kinds).toContain(k);
    }
    // Clusters older than 1.30 install deploy/without-policy: everything but the policy.
    expect(withoutPolicy.some((o) => o.kind?.startsWith('ValidatingAdmissionPolicy'))).toBe(false);
    expect(withoutPolicy.length).toBe(all.length - 2);
  });

  it('sets the image in one place', () => {
    const images = [find(all, 'Deployment', 'kruise-ts-manager'), find(all, 'DaemonSet', 'kruise-ts-daemon')].map((o) => container(o)['image']);
    expect(images).toEqual(['ghcr.io/kruise-ts/kruise-ts:0.1.0', 'ghcr.io/kruise-ts/kruise-ts:0.1.0']);
    const kustomizations = ['kustomization.yaml', 'base/kustomization.yaml', 'policy/kustomization.yaml', 'crds/kustomization.yaml', 'without-policy/kustomization.yaml'];
    expect(kustomizations.filter((f) => readFileSync(join(deployDir(), f), 'utf8').includes('newTag'))).toEqual(['base/kustomization.yaml']);
  });

  it('runs the manager as 2 leader-electing replicas, spread, probed and disruption-budgeted', () => {
    const d = find(all, 'Deployment', 'kruise-ts-manager');
    expect((d['spec'] as Spec)['replicas']).toBe(2);
    expect(podSpec(d)['affinity']).toHaveProperty('podAntiAffinity');
    expect(container(d)).toHaveProperty('readinessProbe.httpGet.path', '/readyz');
    expect(container(d)).toHaveProperty('livenessProbe.httpGet.path', '/healthz');
    expect(container(d)).toHaveProperty('resources.limits.memory');
    expect(find(all, 'PodDisruptionBudget', 'kruise-ts-manager')).toHaveProperty('spec.minAvailable', 1);
  });

  it('runs a daemon on every node: all taints tolerated, node-critical, NODE_NAME, read-only host sockets, limits, probes', () => {
    const ds = find(all, 'DaemonSet', 'kruise-ts-daemon');
    const spec = podSpec(ds);
    expect(spec['tolerations']).toEqual([{ operator: 'Exists' }]);
    expect(spec['priorityClassName']).toBe('system-node-critical');
    const c = container(ds);
    expect(c['env']).toContainEqual({ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } });
    expect((c['volumeMounts'] as Spec[]).every((m) => m['readOnly'] === true)).toBe(true);
    expect(c).toHaveProperty('resources.requests.memory');
    expect(c).toHaveProperty('resources.limits.memory', '128Mi');
    expect(c).toHaveProperty('readinessProbe.httpGet.path', '/readyz');
    expect(c['command']).toEqual(['/nodejs/bin/node', ...DAEMON_V8_FLAGS, '/app/dist/daemon/main.js']);
  });

  it("gives local installations the pods' memory limits (hack/pod-memory.ts reads them from deploy/base)", () => {
    expect(podMemoryLimit('manager')).toBe(memoryBytes(String((container(find(all, 'Deployment', 'kruise-ts-manager'))['resources'] as Spec & { limits: Spec })['limits']['memory'])));
    expect([podMemoryLimit('manager'), podMemoryLimit('daemon')]).toEqual([512 * 1024 ** 2, 128 * 1024 ** 2]);
    expect([memoryBytes('1Gi'), memoryBytes('64M'), memoryBytes('1.5Ki'), memoryBytes('1000')]).toEqual([1024 ** 3, 64e6, 1536, 1000]);
    expect(() => memoryBytes('12Ti')).toThrow(/not one this script reads/);
  });

  it("gives the manager a heap of three quarters of its pod's memory limit, and local installations the same flags", () => {
    expect(container(find(all, 'Deployment', 'kruise-ts-manager'))['command']).toEqual(['/nodejs/bin/node', ...MANAGER_V8_FLAGS, '/app/dist/manager/main.js']);
    const r = spawnSync(process.execPath, [...MANAGER_V8_FLAGS, '-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit))'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    // The old generation's three quarters, and the young generation's few MiB on top (more outside
    // a memory cgroup, as here): V8 took the flag, and left room below the pod's limit.
    const share = Number(r.stdout) / podMemoryLimit('manager');
    expect(share).toBeGreaterThanOrEqual(0.75);
    expect(share).toBeLessThan(0.9);
  });

  it("runs the daemon's V8 flags without a word from V8 on stderr (every log line is JSON)", () => {
    const r = spawnSync(process.execPath, [...DAEMON_V8_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 0, stdout: 'ok', stderr: '' });
  });

  it('ships the webhook configurations the manager code defines (the manager injects the CA)', () => {
    const { mutating, validating } = deployWebhookConfigurations();
    const strip = (o: Rendered): unknown => ({ metadata: o.metadata, webhooks: o['webhooks'] });
    expect(strip(find(all, 'MutatingWebhookConfiguration', 'kruise-ts-mutating-webhook-configuration'))).toEqual({ metadata: mutating.metadata, webhooks: mutating.webhooks });
    expect(strip(find(all, 'ValidatingWebhookConfiguration', 'kruise-ts-validating-webhook-configuration'))).toEqual({ metadata: validating.metadata, webhooks: validating.webhooks });
  });

  it('grants least privilege: the daemon reads secrets only in kruise-ts-daemon-config and writes only status; the manager writes secrets only there', () => {
    const g = grants(withoutPolicy);
    const secrets = g.filter((x) => x.resource === 'secrets');
    expect(secrets.filter((x) => x.identity === 'daemon')).toEqual([{ identity: 'daemon', namespace: 'kruise-ts-daemon-config', group: '', resource: 'secrets', verb: 'get' }]);
    const managerWrites = secrets.filter((x) => x.identity === 'manager' && !['get', 'list', 'watch'].includes(x.verb));
    expect(managerWrites.every((x) => x.namespace === 'kruise-ts-daemon-config' || (x.resourceNames?.join() === 'kruise-ts-webhook-certs' && x.verb === 'update'))).toBe(true);
    const daemonWrites = g.filter((x) => x.identity === 'daemon' && !['get', 'list', 'watch'].includes(x.verb));
    expect(daemonWrites.every((x) => x.resource.endsWith('/status') || x.resource === 'events')).toBe(true);
    expect(g.some((x) => x.verb === '*' || x.resource === '*' || x.group === '*')).toBe(false);
  });

  it('the RBAC check finds both a refused call and an unused grant', () => {
    const used: Access[] = grants(withoutPolicy).map((x) => ({ identity: x.identity, verb: x.verb, group: x.group, resource: x.resource, namespace: x.namespace === '' ? 'ns' : x.namespace, name: x.resourceNames?.[0] ?? 'n' }));
    expect(check(withoutPolicy, used)).toEqual({ refused: [], unused: [] });
    const extra: Access = { identity: 'daemon', verb: 'delete', group: 'apps.kruise.io', resource: 'nodeimages', namespace: '', name: 'n1' };
    expect(check(withoutPolicy, [...used, extra]).refused).toEqual([extra]);
    const listWatch = (a: Access): boolean => a.identity === 'daemon' && a.resource === 'nodeimages' && a.verb === 'list';
    expect(check(withoutPolicy, used.filter((a) => !listWatch(a))).unused).toEqual([expect.objectContaining({ identity: 'daemon', resource: 'nodeimages', verb: 'list' })]);
  });

  it('has examples for every kind', () => {
    expect(readdirSync(join(deployDir(), 'examples')).sort()).toEqual(['cloneset.yaml', 'crr-pod.yaml', 'crr.yaml', 'imagelistpulljob.yaml', 'imagepulljob.yaml']);
  });
});
