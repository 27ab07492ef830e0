/** A token bucket: `qps` tokens per second, at most `burst` saved up. qps <= 0 means unlimited. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private waiting: Promise<void> = Promise.resolve();

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

  /** Takes a token if one is there. */
  tryTake(): boolean {
    if (this.qps <= 0) return true;
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** Waits for a token; callers are served in order. */
  take(): Promise<void> {
    if (this.qps <= 0) return Promise.resolve();
    const turn = this.waiting.then(async () => {
      this.refill();
      if (this.tokens < 1) {
        await new Promise((r) => setTimeout(r, ((1 - this.tokens) / this.qps) * 1000));
        this.refill();
      }
      this.tokens -= 1;
    });
    this.waiting = turn;
    return turn;
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
