import { WorkQueue } from '../../kube/workqueue.js';
import { TokenBucket, ExponentialBackoff } from '../../kube/ratelimit.js';

const tick = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('WorkQueue', () => {
  it('de-duplicates keys that wait', async () => {
    const q = new WorkQueue({ name: 't', concurrency: 1 });
    const seen: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    q.start(async (k) => {
      seen.push(k);
      if (k === 'a') await gate;
    });
    q.add('a');
    q.add('b');
    q.add('b');
    q.add('b');
    release();
    await q.idle();
    expect(seen).toEqual(['a', 'b']);
  });

  it('never runs one key twice at once, and runs it again when added meanwhile', async () => {
    const q = new WorkQueue({ name: 't', concurrency: 4 });
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    q.start(async () => {
      running++;
      runs++;
      maxRunning = Math.max(maxRunning, running);
      await tick(20);
      running--;
    });
    q.add('k');
    await tick(5);
    q.add('k');
    q.add('k');
    await q.idle();
    await tick(30);
    await q.idle();
    expect(maxRunning).toBe(1);
    expect(runs).toBe(2);
  });

  it('bounds concurrency across keys', async () => {
    const q = new WorkQueue({ name: 't', concurrency: 3 });
    let running = 0;
    let maxRunning = 0;
    q.start(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await tick(10);
      running--;
    });
    for (let i = 0; i < 20; i++) q.add(`k${i}`);
    await q.idle();
    expect(maxRunning).toBe(3);
  });

  it('retries failures with per-key exponential backoff and forgets on success', async () => {
    const q = new WorkQueue({ name: 't', concurrency: 1, backoffBaseMs: 10, backoffMaxMs: 1000 });
    const at: number[] = [];
    q.start(async () => {
      at.push(Date.now());
      if (at.length < 4) throw new Error('not yet');
    });
    q.add('k');
    for (let i = 0; i < 100 && at.length < 4; i++) await tick(10);
    await q.idle();
    expect(at).toHaveLength(4);
    const gaps = at.slice(1).map((t, i) => t - (at[i] ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(9);
    expect(gaps[1]).toBeGreaterThanOrEqual(19);
    expect(gaps[2]).toBeGreaterThanOrEqual(39);
    expect(q.failures('k')).toBe(0);
  });

  it('retries keys waiting out a failure backoff at once on request, leaving planned requeues alone', async () => {
    const q = new WorkQueue({ name: 't', concurrency: 1, backoffBaseMs: 60_000, backoffMaxMs: 60_000 });
    const runs: string[] = [];
    q.start(async (key) => {
      runs.push(key);
      if (key === 'failing' && runs.filter((k) => k === key).length === 1) throw new Error('server gone');
      if (key === 'later' && runs.filter((k) => k === key).length === 1) return { requeueAfterMs: 60_000 };
      return undefined;
    });
    q.add('failing');
    q.add('later');
    await q.idle();
    expect(q.failures('failing')).toBe(1);
    q.retryFailedNow();
    await q.idle();
    expect(runs).toEqual(['failing', 'later', 'failing']);
    expect(q.failures('failing')).toBe(0);
    await q.shutdown();
  });

  it('lets retryDelayMs shorten a failure backoff, and hands it the backoff it shortens', async () => {
    const asked: number[] = [];
    const q = new WorkQueue({ name: 't', concurrency: 1, backoffBaseMs: 60_000, backoffMaxMs: 60_000, retryDelayMs: (ms) => (asked.push(ms), 20) });
    let runs = 0;
    q.start(async () => {
      if (++runs === 1) throw new Error('server warming up');
    });
    q.add('k');
    for (let i = 0; i < 100 && runs < 2; i++) await tick(10);
    await q.idle();
    expect(runs).toBe(2);
    expect(asked).toEqual([60_000]);
    await q.shutdown();
  });

  it('honours requeueAfter and keeps the earliest schedule', async () => {
    const q = new WorkQueue({ name: 't', concurrency: 1 });
    const runs: number[] = [];
    const t0 = Date.now();
    q.start(async () => {
      runs.push(Date.now() - t0);
      return runs.length === 1 ? { requeueAfterMs: 50 } : undefined;
    });
    q.add('k');
    await tick(10);
    q.addAfter('k', 500);
    await tick(80);
    await q.idle();
    expect(runs).toHaveLength(2);
    expect(runs[1]).toBeGreaterThanOrEqual(45);
    expect(runs[1]).toBeLessThan(400);
  });

  it('shutdown waits for running work and takes no more', async () => {
    const q = new WorkQueue({ name: 't', concurrency: 2 });
    let finished = 0;
    q.start(async () => {
      await tick(30);
      finished++;
    });
    q.add('a');
    q.add('b');
    await tick(5);
    await q.shutdown();
    expect(finished).toBe(2);
    q.add('c');
    await tick(40);
    expect(finished).toBe(2);
  });
});

describe('rate limiting', () => {
  it('token bucket allows a burst then the rate', () => {
    let now = 0;
    const b = new TokenBucket(2, 3, () => now);
    expect([b.tryTake(), b.tryTake(), b.tryTake(), b.tryTake()]).toEqual([true, true, true, false]);
    now = 500;
    expect(b.tryTake()).toBe(true);
    expect(b.tryTake()).toBe(false);
  });

  it('token bucket serves waiters in order, high ones before normal ones before low ones, at the rate', async () => {
    const b = new TokenBucket(50, 1);
    expect(b.tryTake()).toBe(true);
    const order: string[] = [];
    const t0 = performance.now();
    const all = [
      b.take('low').then(() => order.push('low-1')),
      b.take('low').then(() => order.push('low-2')),
      b.take().then(() => order.push('normal-1')),
      b.take().then(() => order.push('normal-2')),
      b.take('high').then(() => order.push('high-1')),
    ];
    await Promise.all(all);
    expect(order).toEqual(['high-1', 'normal-1', 'normal-2', 'low-1', 'low-2']);
    // Five tokens at 50 per second: about 100 ms, never all at once.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(80);
  });

  it('token bucket keeps its last token for normal callers', async () => {
    let now = 0;
    const b = new TokenBucket(5, 3, () => now);
    expect([b.tryTake('low'), b.tryTake('low'), b.tryTake('low')]).toEqual([true, true, false]);
    // The reserved token: a normal caller still goes at once.
    let went = false;
    void b.take().then(() => (went = true));
    await Promise.resolve();
    expect(went).toBe(true);
    now = 200;
    expect(b.tryTake('low')).toBe(false);
    expect(b.tryTake()).toBe(true);
    // With a burst of 1 there is nothing to reserve.
    expect(new TokenBucket(5, 1, () => 0).tryTake('low')).toBe(true);
  });

  it('exponential backoff doubles to its cap', () => {
    const e = new ExponentialBackoff(100, 1000);
    expect([e.next('a'), e.next('a'), e.next('a'), e.next('a'), e.next('a')]).toEqual([100, 200, 400, 800, 1000]);
    expect(e.next('b')).toBe(100);
    e.forget('a');
    expect(e.next('a')).toBe(100);
  });
});
