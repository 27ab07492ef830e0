import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MESSAGE_DAEMON_TOKEN_UNBOUND, DAEMON_SERVICE_ACCOUNT } from '../../api/daemon-own-node.js';
import { DEFAULT_KRUISE_NAMESPACE, VALIDATING_WEBHOOK_CONFIGURATION } from '../../api/installation.js';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';
import type { KubeObject } from '../../api/types/common.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { serviceAccountToken } from '../../hack/apply.js';
import { restartManager, withToken } from '../../hack/kruise.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { ApiError, RestClient } from '../../kube/rest.js';
import { Resource } from '../../kube/resource.js';
import { updateWithRetry } from '../../kube/write.js';
import { container, crrSpec, ignoresTerm, podSpec, resources, runningPod } from '../helpers/crr.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, kruise, restClient } from '../helpers/kube.js';

// "A daemon writes only its own node's objects" on Kubernetes 1.20, where the
// ValidatingAdmissionPolicy of deploy/policy does not exist: the shared manager restarted with
// --daemon-own-node-webhook, and the daemon ServiceAccount's tokens bound to pods on node-1 and
// node-2 (TokenRequest with a boundObjectRef, as the kubelet issues them for deploy/'s projected
// volume) writing NodeImage and CRR status through the real API server and webhook.
const env = clusterEnv();
const rest = restClient();
const { pods, crrs } = resources(rest);
const configs = new Resource<KubeObject & { webhooks?: Array<{ name: string }> }>(rest, {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
});
const [node1 = '', node2 = ''] = env.nodes.map((n) => n.name);
const dir = mkdtempSync(join(tmpdir(), 'kts-own-node-'));
const clients: RestClient[] = [];
let ns = '';

/** A client with `token` alone (the admin kubeconfig's server and CA, none of its credentials). */
function clientWithToken(token: string, name: string): RestClient {
  const file = join(dir, name);
  withToken(env.kubeconfig, token, file);
  const c = new RestClient(loadClusterAccess(file), { qps: 0 });
  clients.push(c);
  return c;
}

const daemons = new Map<string, RestClient>();

/** The daemon ServiceAccount's token bound to a pod of it on `node`, as the kubelet would get it. */
async function daemonOn(node: string): Promise<RestClient> {
  const known = daemons.get(node);
  if (known) return known;
  const name = `own-node-${ns}-${node}`;
  const spec = podSpec(DEFAULT_KRUISE_NAMESPACE, name, node, [container('c', ignoresTerm)]);
  if (spec.spec) spec.spec.serviceAccountName = DAEMON_SERVICE_ACCOUNT;
  const pod = await pods.create(spec);
  const token = await serviceAccountToken(rest, DEFAULT_KRUISE_NAMESPACE, DAEMON_SERVICE_ACCOUNT, 600, { name, uid: pod.metadata?.uid ?? '' });
  const client = clientWithToken(token, node);
  daemons.set(node, client);
  return client;
}

async function refusal(write: Promise<unknown>): Promise<string> {
  try {
    await write;
  } catch (err) {
    if (err instanceof ApiError) return `${err.status} ${err.message}`;
    throw err;
  }
  return 'allowed';
}

/** Writes the NodeImage's status back unchanged: admission sees the update all the same. */
function touchNodeImage(as: RestClient, node: string): Promise<unknown> {
  return updateWithRetry(new Resource<NodeImage>(as, kruise.nodeImages), undefined, node, (ni) => ni, { status: true });
}

function touchCrr(as: RestClient, name: string): Promise<unknown> {
  return updateWithRetry(new Resource<ContainerRecreateRequest>(as, kruise.crrs), ns, name, (c) => c, { status: true });
}

beforeAll(async () => {
  ns = await createNamespace(rest, 'ownnode');
  await restartManager(env, ['--daemon-own-node-webhook=true']);
  await eventually(async () => expect((await configs.get(undefined, VALIDATING_WEBHOOK_CONFIGURATION)).webhooks?.map((w) => w.name)).toContain('vdaemonownnode.kruise-ts.io'));
}, 90_000);
afterAll(async () => {
  for (const n of [node1, node2]) await pods.delete(DEFAULT_KRUISE_NAMESPACE, `own-node-${ns}-${n}`).catch(() => undefined);
  await restartManager(env);
  await eventually(async () => expect((await configs.get(undefined, VALIDATING_WEBHOOK_CONFIGURATION)).webhooks?.map((w) => w.name)).not.toContain('vdaemonownnode.kruise-ts.io'));
  for (const c of clients) await c.close();
  rmSync(dir, { recursive: true, force: true });
  await deleteNamespace(rest, ns);
  await rest.close();
}, 90_000);

describe("a daemon's credentials write only its own node's status (webhook, Kubernetes 1.20)", () => {
  it("lets the daemon on node-1 write node-1's NodeImage status, and refuses node-2's and a token bound to no pod", async () => {
    const one = await daemonOn(node1);
    expect(await refusal(touchNodeImage(one, node1))).toBe('allowed');
    const other = await refusal(touchNodeImage(one, node2));
    expect(other).toMatch(/^403 /);
    expect(other).toContain(`kruise-daemon on ${node1} may not write the NodeImage of ${node2}`);
    // The installation's daemons run with ServiceAccount tokens bound to no pod (hack/kruise.ts).
    const unbound = new RestClient(loadClusterAccess(join(env.envDir, 'kruise', 'kubeconfig-daemon')), { qps: 0 });
    clients.push(unbound);
    expect(await refusal(touchNodeImage(unbound, node1))).toContain(MESSAGE_DAEMON_TOKEN_UNBOUND);
    // Others are not the daemon: the admin (and the manager) write any status.
    expect(await refusal(touchNodeImage(rest, node2))).toBe('allowed');
  });

  it("lets the daemon on a CRR's node write its status, and refuses the daemon of another node", async () => {
    await pods.create(podSpec(ns, 'target', node2, [container('main', ignoresTerm)]));
    await runningPod(pods, ns, 'target');
    await crrs.create(crrSpec(ns, 'recreate', 'target', ['main']));
    const [one, two] = [await daemonOn(node1), await daemonOn(node2)];
    expect(await refusal(touchCrr(one, 'recreate'))).toContain(`kruise-daemon on ${node1} may not write ContainerRecreateRequest recreate of node ${node2}`);
    expect(await refusal(touchCrr(two, 'recreate'))).toBe('allowed');
  });
});
