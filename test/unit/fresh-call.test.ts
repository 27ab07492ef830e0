import { FreshCall } from '../../daemon/cri/fresh-call.js';

/** A call whose answers the test releases one by one; each answer is the number of the call. */
function controlled(): { fn: () => Promise<number>; started: () => number; finish: (fail?: boolean) => void } {
  const pending: Array<{ n: number; resolve: (n: number) => void; reject: (e: Error) => void }> = [];
  let count = 0;
  return {
    fn: () =>
      new Promise<number>((resolve, reject) => {
        count++;
        pending.push({ n: count, resolve, reject });
      }),
    started: () => count,
    finish: (fail = false) => {
      const p = pending.shift();
      if (p === undefined) throw new Error('no call in flight');
      if (fail) p.reject(new Error(`call ${p.n} failed`));
      else p.resolve(p.n);
    },
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('FreshCall', () => {
  it('starts a call at once when none runs', async () => {
    const c = controlled();
    const shared = new FreshCall(c.fn);
    const a = shared.get();
    expect(c.started()).toBe(1);
    c.finish();
    await expect(a).resolves.toBe(1);
  });

  it('answers callers that asked during a call with one call started after it', async () => {
    const c = controlled();
    const shared = new FreshCall(c.fn);
    const first = shared.get();
    const during = Array.from({ length: 24 }, () => shared.get());
    expect(c.started()).toBe(1);
    c.finish();
    await tick();
    expect(c.started()).toBe(2);
    // A caller arriving while the second call runs must not share it: that call began before it asked.
    const late = shared.get();
    c.finish();
    await expect(first).resolves.toBe(1);
    await expect(Promise.all(during)).resolves.toEqual(Array.from({ length: 24 }, () => 2));
    await tick();
    expect(c.started()).toBe(3);
    c.finish();
    await expect(late).resolves.toBe(3);
  });

  it('starts a new call for a caller after the last one ended', async () => {
    const c = controlled();
    const shared = new FreshCall(c.fn);
    const a = shared.get();
    c.finish();
    await a;
    const b = shared.get();
    expect(c.started()).toBe(2);
    c.finish();
    await expect(b).resolves.toBe(2);
  });

  it('gives a failure to the callers that shared the call, and the next caller a new call', async () => {
    const c = controlled();
    const shared = new FreshCall(c.fn);
    const a = shared.get();
    const b = shared.get();
    c.finish(true);
    await expect(a).rejects.toThrow('call 1 failed');
    await tick();
    c.finish(true);
    await expect(b).rejects.toThrow('call 2 failed');
    const d = shared.get();
    expect(c.started()).toBe(3);
    c.finish();
    await expect(d).resolves.toBe(3);
  });
});
