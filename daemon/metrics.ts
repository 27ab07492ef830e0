import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The daemon's metrics, one registry per process. */
export class DaemonMetrics {
  readonly registry = new Registry();
  readonly pullDuration = new Histogram({
    name: 'kruise_daemon_image_pull_duration_seconds',
    help: 'Time from a tag starting to pull to its result, by result.',
    labelNames: ['result'] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
    registers: [this.registry],
  });
  readonly pullBytes = new Counter({
    name: 'kruise_daemon_image_pull_bytes_total',
    help: 'Size of the images pulled successfully, as the runtime reports it.',
    registers: [this.registry],
  });
  readonly pulls = new Counter({
    name: 'kruise_daemon_image_pulls_total',
    help: 'Finished tag pulls by result and failure reason.',
    labelNames: ['result', 'reason'] as const,
    registers: [this.registry],
  });
  readonly pullsInFlight = new Gauge({
    name: 'kruise_daemon_image_pulls_in_flight',
    help: 'Tags being pulled right now.',
    registers: [this.registry],
  });
  readonly pullsWaiting = new Gauge({
    name: 'kruise_daemon_image_pulls_waiting',
    help: 'Tags waiting for a pull worker.',
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'kruise_daemon_workqueue_depth',
    help: 'Keys waiting in a work queue.',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });
  readonly statusWrites = new Counter({
    name: 'kruise_daemon_status_writes_total',
    help: 'Status writes by resource and result.',
    labelNames: ['resource', 'result'] as const,
    registers: [this.registry],
  });
  readonly crrs = new Counter({
    name: 'kruise_daemon_crr_total',
    help: 'ContainerRecreateRequests this daemon completed, by result (succeeded: every container recreated; failed: not every one).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly crrStops = new Counter({
    name: 'kruise_daemon_crr_container_stops_total',
    help: 'Containers stopped for ContainerRecreateRequests, by result (ok, error).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly crrStopLatency = new Histogram({
    name: 'kruise_daemon_crr_stop_latency_seconds',
    help: 'From the daemon first seeing a ContainerRecreateRequest to its StopContainer call, without the configured unready grace and the preStop hook.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });
  readonly crrStopDuration = new Histogram({
    name: 'kruise_daemon_crr_stop_duration_seconds',
    help: 'Duration of StopContainer calls for ContainerRecreateRequests (the grace period a container takes to exit included).',
    buckets: [0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly events = new Counter({
    name: 'kruise_daemon_events_total',
    help: 'Kubernetes Events recorded, by result (created; patched: an earlier identical Event counted up; dropped: over the per-object rate limit; failed: the write failed).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly criRequests = new Counter({
    name: 'kruise_daemon_cri_requests_total',
    help: 'CRI calls the container runtime answered or failed, by method and result (ok, or the failure: not-found, unavailable, deadline, ...).',
    labelNames: ['method', 'result'] as const,
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'kruise_daemon_api_requests_total',
    help: 'Kubernetes API requests by verb, resource and HTTP code (0: no answer).',
    labelNames: ['verb', 'resource', 'code'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
