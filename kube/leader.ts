import { componentLogger, errorFields, type Logger } from './log.js';
import { ApiError } from './rest.js';
import { sleep } from './informer.js';
import type { KubeObject } from '../api/types/common.js';
import type { Resource } from './resource.js';

export interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger?: Logger;
  /** Called once leadership is won; `signal` aborts when it is lost or the elector stops. */
  onStartedLeading: (signal: AbortSignal) => void;
  onStoppedLeading?: () => void;
  /**
   * Awaited after leadership work was told to stop and before the lease is released on a clean
   * stop, so the next leader never overlaps with writes still in flight here.
   */
  drain?: () => Promise<void>;
}

/** Lease times are MicroTime: RFC 3339 with exactly six fractional digits. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection: candidates try
 * every retryPeriod; a lease counts as expired when its record has not changed for leaseDuration by
 * our own clock (no clock-skew trust); the leader renews every retryPeriod and gives up when it has
 * not renewed within renewDeadline; on a clean stop the leader releases the lease so another
 * candidate takes over at once.
 */
export class LeaderElector {
  private readonly log: Logger;
  private readonly leaseMs: number;
  private readonly renewMs: number;
  private readonly retryMs: number;
  private observed: { holder: string; renewTime: string; rv: string } | undefined;
  private observedAt = 0;
  private leading = false;

  constructor(
    private readonly leases: Resource<Lease>,
    private readonly opts: LeaderElectionOptions,
  ) {
    this.log = opts.logger ?? componentLogger('leader-election');
    this.leaseMs = opts.leaseDurationMs ?? 15_000;
    this.renewMs = opts.renewDeadlineMs ?? 10_000;
    this.retryMs = opts.retryPeriodMs ?? 2_000;
  }

  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Campaigns until leading, leads until leadership is lost or `signal` aborts. Resolves 'lost' or
   * 'stopped', after the leader's work has drained: the caller may campaign again in-process
   * (controller-runtime exits on loss instead, to restart clean).
   */
  async run(signal: AbortSignal): Promise<'lost' | 'stopped'> {
    // After an API server outage the campaign tries again as soon as the server serves.
    while (!signal.aborted && !(await this.tryAcquireOrRenew())) await this.leases.rest.backoff(this.retryMs, signal);
    if (signal.aborted) return 'stopped';
    this.leading = true;
    this.log.info('became leader', { lease: `${this.opts.namespace}/${this.opts.name}`, identity: this.opts.identity });
    const leaderAbort = new AbortController();
    this.opts.onStartedLeading(leaderAbort.signal);
    let lastRenew = Date.now();
    let outcome: 'lost' | 'stopped' = 'stopped';
    while (!signal.aborted) {
      await sleep(this.retryMs, signal);
      if (signal.aborted) break;
      if (await this.tryAcquireOrRenew()) {
        lastRenew = Date.now();
      } else if (Date.now() - lastRenew > this.renewMs || (this.observed && this.observed.holder !== this.opts.identity)) {
        outcome = 'lost';
        break;
      }
    }
    this.leading = false;
    leaderAbort.abort();
    if (outcome === 'lost') this.log.error('leadership lost', { lease: `${this.opts.namespace}/${this.opts.name}` });
    // Lost or stopped, the work in flight ends before anyone campaigns again (here or elsewhere).
    await this.opts.drain?.();
    if (outcome === 'stopped') await this.release();
    this.opts.onStoppedLeading?.();
    return outcome;
  }

  private expired(now: number): boolean {
    return !this.observed || this.observed.holder === '' || this.observedAt + this.leaseMs < now;
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const me = this.opts.identity;
    let lease: Lease;
    try {
      lease = await this.leases.get(this.opts.namespace, this.opts.name);
    } catch (err) {
      if (!(err instanceof ApiError && err.notFound)) {
        this.log.warn('cannot read lease', errorFields(err));
        return false;
      }
      try {
        await this.leases.create({
          metadata: { name: this.opts.name, namespace: this.opts.namespace },
          spec: {
            holderIdentity: me,
            leaseDurationSeconds: Math.round(this.leaseMs / 1000),
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        });
        this.observe(me, microTime(now), '');
        return true;
      } catch (e) {
        if (!(e instanceof ApiError && e.alreadyExists)) this.log.warn('cannot create lease', errorFields(e));
        return false;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    if (!this.observed || this.observed.holder !== holder || this.observed.renewTime !== (spec.renewTime ?? '') || this.observed.rv !== lease.metadata?.resourceVersion) {
      this.observe(holder, spec.renewTime ?? '', lease.metadata?.resourceVersion ?? '');
    }
    if (holder !== me && !this.expired(now.getTime())) return false;
    const transition = holder !== me;
    const next: Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: me,
        leaseDurationSeconds: Math.round(this.leaseMs / 1000),
        renewTime: microTime(now),
        acquireTime: transition ? microTime(now) : (spec.acquireTime ?? microTime(now)),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (transition && holder !== '' ? 1 : 0),
      },
    };
    try {
      const written = await this.leases.update(next);
      this.observe(me, next.spec?.renewTime ?? '', written.metadata?.resourceVersion ?? '');
      return true;
    } catch (err) {
      if (!(err instanceof ApiError && err.conflict)) this.log.warn('cannot update lease', errorFields(err));
      return false;
    }
  }

  private observe(holder: string, renewTime: string, rv: string): void {
    this.observed = { holder, renewTime, rv };
    this.observedAt = Date.now();
  }

  /** Hands the lease back so the next candidate need not wait for it to expire. */
  private async release(): Promise<void> {
    try {
      const lease = await this.leases.get(this.opts.namespace, this.opts.name);
      if (lease.spec?.holderIdentity !== this.opts.identity) return;
      await this.leases.update({
        ...lease,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(new Date()) },
      });
      this.log.info('released leadership', { lease: `${this.opts.namespace}/${this.opts.name}` });
    } catch (err) {
      this.log.warn('cannot release lease', errorFields(err));
    }
  }
}
