export type Priority = 'high' | 'normal' | 'low';
const ORDER: readonly Priority[] = ['high', 'normal', 'low'];

/**
 * A token bucket: `qps` tokens per second, at most `burst` saved up; qps <= 0 means unlimited.
 * Waiters are served in order, `high` ones before every `normal` one and those before every `low`
 * one, and `low` ones never take the last token: best-effort calls (events) neither queue ahead of
 * the ones that matter (status writes) nor leave them waiting for a token under the same budget,
 * and a call something waits on (a CRR's stop, which waits for its recorded intent) goes first.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly queues: Record<Priority, Array<() => void>> = { high: [], normal: [], low: [] };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
  }

  /** Takes a token if one is there (for `low`, one beyond the reserved last one). */
  tryTake(priority: Priority = 'normal'): boolean {
    if (this.qps <= 0) return true;
    this.refill();
    if (this.tokens >= 1 + this.reserve(priority)) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  private reserve(priority: Priority): number {
    return priority === 'low' && this.burst >= 2 ? 1 : 0;
  }

  /** Waits for a token. */
  take(priority: Priority = 'normal'): Promise<void> {
    if (this.qps <= 0) return Promise.resolve();
    const ahead = ORDER.slice(0, ORDER.indexOf(priority) + 1).reduce((n, p) => n + this.queues[p].length, 0);
    if (ahead === 0 && this.tryTake(priority)) return Promise.resolve();
    return new Promise((resolve) => {
      this.queues[priority].push(resolve);
      this.serve();
    });
  }

  private serve(): void {
    if (this.timer) return;
    for (;;) {
      const priority = ORDER.find((p) => this.queues[p].length > 0) ?? 'low';
      const queue = this.queues[priority];
      const next = queue[0];
      if (!next) return;
      if (!this.tryTake(priority)) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.serve();
        }, Math.max(1, ((1 + this.reserve(priority) - this.tokens) / this.qps) * 1000));
        return;
      }
      queue.shift();
      next();
    }
  }
}

/** Per-key exponential backoff: base * 2^failures, capped, as client-go's ItemExponentialFailureRateLimiter. */
export class ExponentialBackoff {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}

  next(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return Math.min(this.maxMs, this.baseMs * 2 ** n);
  }

  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }
}
