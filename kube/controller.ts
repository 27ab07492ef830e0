import { componentLogger, type Logger } from './log.js';
import { WorkQueue, type Reconciler } from './workqueue.js';

/** What a controller reports to metrics. */
export interface ControllerMetricsSink {
  reconciled(controller: string, result: 'success' | 'error' | 'requeue', seconds: number): void;
  depth(controller: string, n: number): void;
}

export interface Controller {
  readonly name: string;
  /** Starts processing; informers are started and synced by the caller before. */
  start(): void;
  /** Stops taking work; resolves when running reconciles have finished. */
  stop(): Promise<void>;
  /** Retries now what failed on an API server that is back (WorkQueue.retryFailedNow). */
  retryFailedNow(): void;
}

/**
 * A controller in controller-runtime's shape: event handlers enqueue keys, `workers` reconciles run
 * at once, each reconcile reads the cache and writes what differs; errors retry with per-key
 * exponential backoff; a result may ask to look again later.
 */
export class QueueController implements Controller {
  readonly queue: WorkQueue;
  readonly log: Logger;

  constructor(
    readonly name: string,
    workers: number,
    private readonly reconcile: Reconciler,
    metrics?: ControllerMetricsSink,
    logger?: Logger,
  ) {
    this.log = logger ?? componentLogger(name);
    this.queue = new WorkQueue({
      name,
      concurrency: workers,
      logger: this.log,
      ...(metrics
        ? {
            metrics: {
              depth: (n: number) => metrics.depth(name, n),
              processed: (result: 'success' | 'error' | 'requeue', seconds: number) => metrics.reconciled(name, result, seconds),
            },
          }
        : {}),
    });
  }

  start(): void {
    this.queue.start(this.reconcile);
  }

  stop(): Promise<void> {
    return this.queue.shutdown();
  }

  retryFailedNow(): void {
    this.queue.retryFailedNow();
  }
}
