import pLimit from 'p-limit';
import { ExponentialBackoff } from './ratelimit.js';
import type { Logger } from './log.js';
import { componentLogger, errorFields } from './log.js';

export interface QueueMetrics {
  depth?: (n: number) => void;
  processed?: (result: 'success' | 'error' | 'requeue', seconds: number) => void;
}

export interface WorkQueueOptions {
  name: string;
  concurrency: number;
  /** Per-key retry backoff after failures: base doubling to max (client-go: 5 ms → 1000 s). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Shortens a failure's backoff (RestClient.retryDelayMs: the API server warming up after an outage). */
  retryDelayMs?: (ms: number) => number;
  logger?: Logger;
  metrics?: QueueMetrics;
}

/** What a reconcile asks for: nothing (done), or to look again after a while. */
export interface Result {
  requeueAfterMs?: number;
}

export type Reconciler = (key: string) => Promise<Result | void>;

/**
 * A keyed, de-duplicating work queue with client-go's semantics: a key waiting is queued once no
 * matter how often it is added; a key being processed is never processed twice at once, and if it is
 * added meanwhile it runs again right after; failures retry with per-key exponential backoff;
 * at most `concurrency` keys run at once (p-limit).
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly backoff: ExponentialBackoff;
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly log: Logger;
  private reconcile: Reconciler | undefined;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly opts: WorkQueueOptions) {
    this.backoff = new ExponentialBackoff(opts.backoffBaseMs ?? 5, opts.backoffMaxMs ?? 1_000_000);
    this.limit = pLimit(opts.concurrency);
    this.log = opts.logger ?? componentLogger(`queue/${opts.name}`);
  }

  get length(): number {
    return this.queue.length;
  }

  /** Keys waiting, running, or scheduled for later. */
  get pending(): number {
    return this.dirty.size + this.processing.size + this.timers.size;
  }

  add(key: string): void {
    if (this.stopped || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** Adds after a delay; an earlier pending schedule for the key wins. */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  private retryDelay(key: string): number {
    const ms = this.backoff.next(key);
    return this.opts.retryDelayMs?.(ms) ?? ms;
  }

  forget(key: string): void {
    this.backoff.forget(key);
  }

  failures(key: string): number {
    return this.backoff.failuresOf(key);
  }

  /**
   * Retries at once every key waiting out a failure backoff: what they failed on (the API server)
   * is back, so waiting longer only delays convergence.
   */
  retryFailedNow(): void {
    for (const [key, { timer }] of [...this.timers]) {
      if (this.backoff.failuresOf(key) === 0) continue;
      clearTimeout(timer);
      this.timers.delete(key);
      this.backoff.forget(key);
      this.add(key);
    }
  }

  start(reconcile: Reconciler): void {
    this.reconcile = reconcile;
    for (let i = 0; i < this.queue.length; i++) this.schedule();
  }

  /** Stops taking work; resolves once running reconciles have finished. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queue.length = 0;
    this.dirty.clear();
    await this.idle();
  }

  /** Resolves when nothing is queued or running (scheduled retries do not count). */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.processing.size === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private enqueue(key: string): void {
    this.queue.push(key);
    this.opts.metrics?.depth?.(this.queue.length);
    this.schedule();
  }

  // One p-limit task per queued key; the task takes whichever key is at the head when it gets a
  // slot, so a key stays "waiting" (and de-duplicated) until then.
  private schedule(): void {
    if (!this.reconcile) return;
    void this.limit(() => this.next());
  }

  private async next(): Promise<void> {
    const reconcile = this.reconcile;
    const key = this.queue.shift();
    if (key === undefined || !reconcile) return;
    this.dirty.delete(key);
    this.processing.add(key);
    this.opts.metrics?.depth?.(this.queue.length);
    await this.process(key, reconcile);
  }

  private async process(key: string, reconcile: Reconciler): Promise<void> {
    const t0 = performance.now();
    let outcome: 'success' | 'error' | 'requeue' = 'success';
    try {
      const res = await reconcile(key);
      this.forget(key);
      if (res && res.requeueAfterMs !== undefined) {
        outcome = 'requeue';
        this.addAfter(key, res.requeueAfterMs);
      }
    } catch (err) {
      outcome = 'error';
      const retryInMs = this.retryDelay(key);
      this.log.warn('reconcile failed, will retry', { key, retryInMs, ...errorFields(err) });
      this.addAfter(key, retryInMs);
    } finally {
      this.processing.delete(key);
      this.opts.metrics?.processed?.(outcome, (performance.now() - t0) / 1000);
      if (this.dirty.has(key) && !this.stopped) this.enqueue(key);
      if (this.queue.length === 0 && this.processing.size === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    }
  }
}
