import type { FaultProxy } from '../proxy/fault-proxy.js';
import { Resource, core } from '../../kube/resource.js';
import type { KubeObject } from '../../api/types/common.js';
import { eventually, restClient, startProxy } from '../helpers/kube.js';

// The REST client's view of an API server outage, through a fault proxy in front of the real
// kube-apiserver: when the retries it held back may go out again.
let proxy: FaultProxy;

beforeAll(async () => {
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
});
afterEach(() => {
  proxy.reset();
  proxy.clearLog();
});

const readyz = /^\/readyz/;

/** A client through the proxy that has met an outage: its request found no server. */
async function afterOutage(): Promise<ReturnType<typeof restClient>> {
  const rest = restClient(proxy.url);
  proxy.refuseConnections();
  await expect(rest.request('GET', '/api/v1/namespaces/default')).rejects.toMatchObject({ status: 0 });
  return rest;
}

describe('RestClient after an API server outage', () => {
  it('wakes held-back retries at the first answer of the server; those that meet its warm-up go again within a second', async () => {
    const fresh = restClient(proxy.url);
    const rest = await afterOutage();
    try {
      const woken = rest.backoff(60_000);
      // A restarting kube-apiserver answers before it serves: 500 from /readyz and 403 for
      // ServiceAccounts while its caches fill.
      proxy.failNext({ status: 500, times: Infinity, match: { path: readyz } });
      proxy.failNext({ status: 403, times: Infinity, match: { path: /^\/api\// } });
      proxy.acceptConnections();
      await expect(woken).resolves.toBe(true);
      expect(proxy.count({ pathRegex: readyz, status: 500 })).toBe(1);
      await expect(rest.request('GET', '/api/v1/namespaces/default')).rejects.toMatchObject({ status: 403 });
      // A refusal is an answer, not an outage: nothing wakes this wait, but the warm-up bounds it.
      const start = Date.now();
      await expect(rest.backoff(8_000)).resolves.toBe(false);
      expect(Date.now() - start).toBeLessThan(2_000);
      proxy.clearFaults();
      await rest.request('GET', '/api/v1/namespaces/default');
      // A client that met no outage waits its whole backoff.
      const freshStart = Date.now();
      await expect(fresh.backoff(1_500)).resolves.toBe(false);
      expect(Date.now() - freshStart).toBeGreaterThanOrEqual(1_400);
    } finally {
      await rest.close();
      await fresh.close();
    }
  });

  it('a success of any request ends the outage at once, before the probe asks', async () => {
    const rest = await afterOutage();
    try {
      const woken = rest.backoff(60_000);
      proxy.acceptConnections();
      await rest.request('GET', '/api/v1/namespaces/default');
      await expect(woken).resolves.toBe(true);
      expect(proxy.count({ pathRegex: readyz })).toBe(0);
    } finally {
      await rest.close();
    }
  });

  it('a probe that gets any answer wakes every waiter', async () => {
    const rest = await afterOutage();
    try {
      const waiters = [rest.backoff(60_000), rest.backoff(60_000)];
      proxy.failNext({ status: 500, times: 1, match: { path: readyz } });
      proxy.acceptConnections();
      await expect(Promise.all(waiters)).resolves.toEqual([true, true]);
      await eventually(() => expect(proxy.count({ pathRegex: readyz, status: 500 })).toBe(1));
      expect(proxy.count({ pathRegex: readyz })).toBe(1);
    } finally {
      await rest.close();
    }
  });
});

describe('Resource paths', () => {
  it('refuses an empty namespace for a namespaced kind before any request: `namespaces//…` names another path', async () => {
    const pods = new Resource<KubeObject>(restClient(proxy.url), core.pods);
    await expect(pods.get('', 'p')).rejects.toThrow('pods: an empty namespace names no Pod (undefined means all namespaces)');
    await expect(pods.list('')).rejects.toThrow('an empty namespace');
    expect(proxy.requests()).toEqual([]);
    // undefined is every namespace; a cluster-scoped kind ignores the namespace.
    expect(pods.path(undefined, 'p')).toBe('/api/v1/pods/p');
    expect(new Resource<KubeObject>(restClient(proxy.url), core.nodes).path('', 'n')).toBe('/api/v1/nodes/n');
  });
});
