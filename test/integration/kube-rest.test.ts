import type { FaultProxy } from '../proxy/fault-proxy.js';
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
  it('wakes held-back retries when the server serves again, not when it first answers', async () => {
    const rest = await afterOutage();
    try {
      let wokenAt = 0;
      const woken = rest.backoff(60_000).then((w) => {
        wokenAt = Date.now();
        return w;
      });
      // A restarting kube-apiserver answers before it serves: 500 from /readyz and 403 for
      // ServiceAccounts while its caches fill.
      proxy.failNext({ status: 500, times: Infinity, match: { path: readyz } });
      proxy.failNext({ status: 403, times: Infinity, match: { path: /^\/api\// } });
      proxy.acceptConnections();
      await expect(rest.request('GET', '/api/v1/namespaces/default')).rejects.toMatchObject({ status: 403 });
      await new Promise((r) => setTimeout(r, 3_000));
      expect(wokenAt).toBe(0);
      // Once the server answers, the client asks whether it is ready more often than while it was away.
      expect(proxy.count({ pathRegex: readyz, status: 500 })).toBeGreaterThanOrEqual(4);
      proxy.clearFaults();
      await expect(woken).resolves.toBe(true);
      await rest.request('GET', '/api/v1/namespaces/default');
    } finally {
      await rest.close();
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

  it('a probe that finds /readyz ready wakes every waiter', async () => {
    const rest = await afterOutage();
    try {
      const waiters = [rest.backoff(60_000), rest.backoff(60_000)];
      proxy.acceptConnections();
      await expect(Promise.all(waiters)).resolves.toEqual([true, true]);
      await eventually(() => expect(proxy.count({ pathRegex: readyz, status: 200 })).toBe(1));
    } finally {
      await rest.close();
    }
  });
});
