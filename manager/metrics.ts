import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The manager's metrics, one registry per process. */
export class ManagerMetrics {
  readonly registry = new Registry();
  readonly reconciles = new Counter({
    name: 'kruise_manager_reconciles_total',
    help: 'Reconciles by controller and result (success, error, requeue).',
    labelNames: ['controller', 'result'] as const,
    registers: [this.registry],
  });
  readonly reconcileSeconds = new Histogram({
    name: 'kruise_manager_reconcile_duration_seconds',
    help: 'Reconcile duration by controller.',
    labelNames: ['controller'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'kruise_manager_workqueue_depth',
    help: 'Keys waiting in a controller work queue.',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'kruise_manager_api_requests_total',
    help: 'Kubernetes API requests by verb, resource and HTTP code (0: no answer).',
    labelNames: ['verb', 'resource', 'code'] as const,
    registers: [this.registry],
  });
  readonly webhookRequests = new Counter({
    name: 'kruise_manager_webhook_requests_total',
    help: 'Admission reviews by webhook path and whether they were allowed.',
    labelNames: ['path', 'allowed'] as const,
    registers: [this.registry],
  });
  readonly events = new Counter({
    name: 'kruise_manager_events_total',
    help: 'Kubernetes Events recorded, by result (created; patched: an earlier identical Event counted up; dropped: over the per-object rate limit; failed: the write failed).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'kruise_manager_leader',
    help: '1 while this replica runs the controllers.',
    registers: [this.registry],
  });
  readonly leadershipLost = new Counter({
    name: 'kruise_manager_leadership_lost_total',
    help: 'Terms that ended because the lease could not be renewed (the replica campaigns again in-process).',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
