import { readFileSync, statSync } from 'node:fs';
import type { Pod } from '../../api/types/core.js';
import type { KubeObject } from '../../api/types/common.js';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';
import { ApiError } from '../../kube/rest.js';
import { core, Resource } from '../../kube/resource.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, kruise, restClient } from '../helpers/kube.js';

// The CRR admission webhook reads the pod and its node from the API server's watch cache
// (resourceVersion=0), and reads them again from etcd before it refuses: the API server's audit log
// shows which reads the installed manager made for each CRR.
const env = clusterEnv();
const rest = restClient();
const pods = new Resource<Pod & KubeObject>(rest, core.pods);
const crrs = new Resource<ContainerRecreateRequest>(rest, kruise.crrs);
let ns = '';
beforeAll(async () => {
  ns = await createNamespace(rest, 'crr-reads');
});
afterAll(() => deleteNamespace(rest, ns));

interface AuditEvent {
  stage: string;
  verb: string;
  requestURI: string;
  user?: { username?: string };
}

/** The manager's GETs of `path` logged since `from` (bytes into the audit log), by request URI. */
function managerGets(from: number, path: string): string[] {
  return readFileSync(env.auditLog)
    .subarray(from)
    .toString('utf8')
    .split('\n')
    .flatMap((l) => (l.includes(path) ? [JSON.parse(l) as AuditEvent] : []))
    .filter((e) => e.stage === 'ResponseComplete' && e.verb === 'get' && (e.user?.username ?? '').endsWith(':kruise-ts-manager'))
    .map((e) => e.requestURI);
}

describe('CRR admission reads', () => {
  it('admits from the watch cache without reading etcd, and reads etcd before refusing', async () => {
    await pods.create({
      metadata: { name: 'target', namespace: ns },
      spec: {
        nodeName: env.nodes[0]?.name ?? '',
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: `${env.registryOpen}/busybox:1.0`, imagePullPolicy: 'IfNotPresent', command: ['/bin/sleep', 'infinity'] }],
      },
    });
    const pod = await eventually(async () => {
      const p = await pods.get(ns, 'target');
      if (!p.status?.containerStatuses?.[0]?.containerID) throw new Error('not started');
      return p;
    }, 60_000);
    // The answer below is complete once the cache serves this version of the pod.
    await eventually(async () => {
      if ((await pods.getFromCache(ns, 'target')).metadata?.resourceVersion !== pod.metadata?.resourceVersion) throw new Error('cache behind');
    });

    const from = statSync(env.auditLog).size;
    const admitted = await crrs.create({ metadata: { name: 'admitted', namespace: ns }, spec: { podName: 'target', containers: [{ name: 'main' }], strategy: { minStartedSeconds: 1 } } });
    expect(admitted.spec.containers[0]?.statusContext?.containerID).toBe(pod.status?.containerStatuses?.[0]?.containerID);
    const podPath = `/api/v1/namespaces/${ns}/pods/target`;
    const reads = await eventually(() => {
      const r = managerGets(from, podPath);
      if (r.length === 0) throw new Error('no read logged yet');
      return r;
    });
    expect(reads).toEqual([`${podPath}?resourceVersion=0`]);

    const before = statSync(env.auditLog).size;
    const refused = await crrs.create({ metadata: { name: 'refused', namespace: ns }, spec: { podName: 'absent', containers: [{ name: 'main' }] } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).message).toContain('absent');
    const absentPath = `/api/v1/namespaces/${ns}/pods/absent`;
    const both = await eventually(() => {
      const r = managerGets(before, absentPath);
      if (r.length < 2) throw new Error('reads not logged yet');
      return r;
    });
    expect(both.sort()).toEqual([absentPath, `${absentPath}?resourceVersion=0`]);
  });
});
