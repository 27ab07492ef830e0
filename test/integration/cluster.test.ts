import type { Pod } from '../../api/types/core.js';
import { CriClient } from '../../daemon/cri/client.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient } from '../helpers/kube.js';

const env = clusterEnv();
const rest = restClient();
const pods = new Resource<Pod>(rest, core.pods);
const nodes = new Resource<KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>(rest, core.nodes);
let ns = '';

beforeAll(async () => {
  ns = await createNamespace(rest, 'cluster');
});
afterAll(async () => {
  await deleteNamespace(rest, ns);
});

function sleeper(name: string, node: string): Pod {
  return {
    metadata: { name, namespace: ns, labels: { app: name } },
    spec: {
      nodeName: node,
      hostNetwork: true,
      terminationGracePeriodSeconds: 2,
      restartPolicy: 'Always',
      containers: [{ name: 'main', image: `${env.registryOpen}/busybox:1.0`, imagePullPolicy: 'IfNotPresent', command: ['/bin/sleep', 'infinity'] }],
    },
  };
}

async function running(name: string): Promise<Pod> {
  return eventually(async () => {
    const p = await pods.get(ns, name);
    const cs = p.status?.containerStatuses?.[0];
    if (!cs?.state?.running || !cs.ready || !cs.containerID) throw new Error(`pod ${name} not running yet: ${JSON.stringify(cs?.state)}`);
    return p;
  }, 60_000);
}

describe('the local test cluster', () => {
  it('has every node registered and Ready', async () => {
    expect(env.nodes.length).toBeGreaterThanOrEqual(2);
    for (const n of env.nodes) {
      const node = await nodes.get(undefined, n.name);
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
  });

  it('runs a host-network pod to Running on each node', async () => {
    for (const n of env.nodes) await pods.create(sleeper(`sleeper-${n.name}`, n.name));
    for (const n of env.nodes) {
      const p = await running(`sleeper-${n.name}`);
      expect(p.spec?.nodeName).toBe(n.name);
      expect(p.status?.podIP).toBe(p.status?.hostIP);
    }
  });

  it('lets the kubelet restart a container that was stopped through CRI', async () => {
    const node = env.nodes[0];
    if (!node) throw new Error('no node');
    const name = 'restart-check';
    await pods.create(sleeper(name, node.name));
    const before = await running(name);
    const oldId = before.status?.containerStatuses?.[0]?.containerID ?? '';
    expect(oldId).toMatch(/^containerd:\/\//);
    const cri = new CriClient(node.criSocket);
    try {
      await cri.stopContainer(oldId.replace('containerd://', ''), 0);
      const after = await eventually(async () => {
        const p = await pods.get(ns, name);
        const cs = p.status?.containerStatuses?.[0];
        if (cs?.restartCount !== 1 || !cs.state?.running || cs.containerID === oldId) throw new Error('not restarted yet');
        return cs;
      }, 60_000);
      expect(after.lastState?.terminated?.exitCode).toBe(137);
      expect(after.lastState?.terminated?.containerID).toBe(oldId);
      const listed = await cri.runtime('ListContainers', { filter: { label_selector: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': ns } } });
      expect(listed.containers.find((c) => `containerd://${c.id}` === after.containerID)?.state).toBe('CONTAINER_RUNNING');
    } finally {
      cri.close();
    }
  });
});
