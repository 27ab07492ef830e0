import { LeaderElector, type Lease } from '../../kube/leader.js';
import { core, Resource } from '../../kube/resource.js';
import type { FaultProxy } from '../proxy/fault-proxy.js';
import { createNamespace, deleteNamespace, eventually, restClient, startProxy } from '../helpers/kube.js';

const direct = restClient();
let ns = '';
let proxy: FaultProxy;
beforeAll(async () => {
  ns = await createNamespace(direct, 'leader');
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
  await deleteNamespace(direct, ns);
});

interface Candidate {
  elector: LeaderElector;
  leading: boolean;
  startedAt: number[];
  stoppedAt: number[];
  result: Promise<'lost' | 'stopped'>;
  stop: () => void;
}

function candidate(identity: string, lease: string, viaProxy = false): Candidate {
  const rest = viaProxy ? restClient(proxy.url) : direct;
  const c = { leading: false, startedAt: [] as number[], stoppedAt: [] as number[] } as Candidate;
  c.elector = new LeaderElector(new Resource<Lease>(rest, core.leases), {
    namespace: ns,
    name: lease,
    identity,
    leaseDurationMs: 3000,
    renewDeadlineMs: 2000,
    retryPeriodMs: 300,
    onStartedLeading: (signal) => {
      c.leading = true;
      c.startedAt.push(Date.now());
      signal.addEventListener('abort', () => {
        c.leading = false;
        c.stoppedAt.push(Date.now());
      });
    },
  });
  const ac = new AbortController();
  c.result = c.elector.run(ac.signal);
  c.stop = () => ac.abort();
  return c;
}

describe('leader election on a real Lease', () => {
  it('elects exactly one leader and hands over at once on a clean stop', async () => {
    const a = candidate('a', 'handover');
    await eventually(() => expect(a.leading).toBe(true));
    const b = candidate('b', 'handover');
    await new Promise((r) => setTimeout(r, 1500));
    expect(b.leading).toBe(false);
    const stoppedAt = Date.now();
    a.stop();
    expect(await a.result).toBe('stopped');
    await eventually(() => expect(b.leading).toBe(true));
    // A released lease is taken within a retry period or two, not after the 3 s lease duration.
    expect((b.startedAt[0] ?? 0) - stoppedAt).toBeLessThan(2000);
    const lease = await new Resource<Lease>(direct, core.leases).get(ns, 'handover');
    expect(lease.spec?.holderIdentity).toBe('b');
    expect(lease.spec?.leaseTransitions).toBe(0);
    b.stop();
    await b.result;
  });

  it('a leader cut off from the API server stops leading; another takes over after the lease expires', async () => {
    const a = candidate('a', 'partition', true);
    await eventually(() => expect(a.leading).toBe(true));
    const b = candidate('b', 'partition');
    proxy.refuseConnections();
    const cutAt = Date.now();
    expect(await a.result).toBe('lost');
    expect(a.leading).toBe(false);
    expect((a.stoppedAt[0] ?? 0) - cutAt).toBeLessThan(4000);
    await eventually(() => expect(b.leading).toBe(true), 10_000);
    expect((b.startedAt[0] ?? 0) - cutAt).toBeGreaterThanOrEqual(2500);
    const lease = await new Resource<Lease>(direct, core.leases).get(ns, 'partition');
    expect(lease.spec?.holderIdentity).toBe('b');
    expect(lease.spec?.leaseTransitions).toBe(1);
    proxy.acceptConnections();
    b.stop();
    await b.result;
  });
});
