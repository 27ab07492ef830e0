import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { componentLogger, errorFields } from './log.js';
import { TokenBucket } from './ratelimit.js';
import { ApiError } from './rest.js';
import type { KubeObject } from '../api/types/common.js';
import type { ObjectReference } from '../api/types/core.js';
import { apiVersionOf, core, PATCH_MERGE, Resource, type ResourceType } from './resource.js';
import type { RestClient } from './rest.js';

export type EventType = 'Normal' | 'Warning';

export interface EventSource {
  component: string;
  host?: string;
}

/** The object an event is about: a full object, or just its reference. */
export interface EventTarget {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string | undefined;
  uid?: string | undefined;
  fieldPath?: string;
}

/** The target for an object of `type` (cached list items carry no apiVersion and kind). */
export function eventTarget(type: ResourceType, obj: KubeObject): EventTarget {
  return {
    apiVersion: apiVersionOf(type),
    kind: type.kind,
    name: obj.metadata?.name ?? '',
    namespace: obj.metadata?.namespace || undefined,
    uid: obj.metadata?.uid || undefined,
  };
}

/** The target an ObjectReference to an object of `type` (an owner, say) names. */
export function referenceTarget(type: ResourceType, ref: ObjectReference): EventTarget {
  return { apiVersion: ref.apiVersion || apiVersionOf(type), kind: type.kind, name: ref.name ?? '', namespace: ref.namespace || undefined, uid: ref.uid || undefined };
}

interface KubeEvent extends KubeObject {
  involvedObject: EventTarget;
  reason: string;
  message: string;
  type: EventType;
  source: EventSource;
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  reportingComponent: string;
  reportingInstance: string;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: string;
}

/**
 * What became of a recorded event: a new Event, an earlier identical one counted up, dropped by the
 * per-object rate limit, or a write that failed.
 */
export type EventResult = 'created' | 'patched' | 'dropped' | 'failed';

export interface RecorderOptions {
  /** Told the result of every event (metrics). */
  onResult?: (result: EventResult) => void;
}

// client-go's spam filter and aggregator: per object a burst of 25 events, then one every 5 minutes;
// more than 10 distinct messages for one object and reason within 10 minutes are combined into one
// Event; the 4096 most recent objects and messages are remembered.
const BURST = 25;
const REFILL_SECONDS = 300;
const SIMILAR_LIMIT = 10;
const SIMILAR_WINDOW_MS = 600_000;
const CACHE_SIZE = 4096;

function targetOf(obj: KubeObject): EventTarget {
  return {
    apiVersion: obj.apiVersion ?? '',
    kind: obj.kind ?? '',
    name: obj.metadata?.name ?? '',
    namespace: obj.metadata?.namespace || undefined,
    uid: obj.metadata?.uid || undefined,
  };
}

/**
 * Records core/v1 Events like client-go's recorder: identical events become one Event whose count
 * goes up (a PATCH, not a new object); more than SIMILAR_LIMIT different messages for the same
 * object and reason in the window are combined into one; a token bucket per object drops floods;
 * writes happen in the background, one at a time, and a failure is only logged.
 */
export class EventRecorder {
  private readonly events: Resource<KubeEvent>;
  private readonly seen = new Map<string, Seen>();
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly similar = new Map<string, { messages: Set<string>; since: number }>();
  private readonly queue = pLimit(1);
  private readonly log = componentLogger('events');

  constructor(
    rest: RestClient,
    private readonly source: EventSource,
    private readonly opts: RecorderOptions = {},
  ) {
    this.events = new Resource(rest, core.events);
  }

  event(target: EventTarget | KubeObject, type: EventType, reason: string, message: string): void {
    const t = 'metadata' in target ? targetOf(target) : (target as EventTarget);
    const objKey = `${t.kind}/${t.namespace ?? ''}/${t.name}/${t.uid ?? ''}/${t.fieldPath ?? ''}`;
    let bucket = this.buckets.get(objKey);
    if (!bucket) {
      bucket = new TokenBucket(1 / REFILL_SECONDS, BURST);
      this.buckets.set(objKey, bucket);
      this.trim(this.buckets);
    }
    const { msg, combined } = this.combineSimilar(objKey, type, reason, message);
    // Combined events share one Event whose message follows the latest occurrence.
    const key = combined ? `${objKey}/${type}/${reason}/(combined)` : `${objKey}/${type}/${reason}/${msg}`;
    if (!this.seen.has(key) && !bucket.tryTake()) {
      this.opts.onResult?.('dropped');
      this.log.debug('event dropped by rate limit', { reason, kind: t.kind, name: t.name });
      return;
    }
    void this.queue(() => this.write(key, t, type, reason, msg));
  }

  /** Resolves when every recorded event has been written (or has failed). */
  flush(): Promise<void> {
    return this.queue(() => Promise.resolve());
  }

  private combineSimilar(objKey: string, type: string, reason: string, message: string): { msg: string; combined: boolean } {
    const k = `${objKey}/${type}/${reason}`;
    const now = Date.now();
    let s = this.similar.get(k);
    if (!s || now - s.since > SIMILAR_WINDOW_MS) {
      s = { messages: new Set(), since: now };
      this.similar.set(k, s);
      this.trim(this.similar);
    }
    s.messages.add(message);
    if (s.messages.size > SIMILAR_LIMIT) {
      return { msg: `(combined from similar events): ${message}`, combined: true };
    }
    return { msg: message, combined: false };
  }

  private trim<V>(m: Map<string, V>): void {
    while (m.size > CACHE_SIZE) {
      const first = m.keys().next().value;
      if (first === undefined) break;
      m.delete(first);
    }
  }

  private async write(key: string, t: EventTarget, type: EventType, reason: string, message: string): Promise<void> {
    const now = new Date().toISOString();
    const prior = this.seen.get(key);
    try {
      if (prior) {
        prior.count++;
        try {
          await this.events.patch(prior.namespace, prior.name, { count: prior.count, lastTimestamp: now, message }, PATCH_MERGE);
          this.opts.onResult?.('patched');
          return;
        } catch (err) {
          if (!(err instanceof ApiError && err.notFound)) throw err;
        }
      }
      const namespace = t.namespace ?? 'default';
      const name = `${t.name}.${createHash('sha1').update(key + now).digest('hex').slice(0, 16)}`;
      await this.events.create({
        metadata: { name, namespace },
        involvedObject: t,
        reason,
        message,
        type,
        source: this.source,
        firstTimestamp: prior?.firstTimestamp ?? now,
        lastTimestamp: now,
        count: prior?.count ?? 1,
        reportingComponent: this.source.component,
        reportingInstance: this.source.host ?? '',
      });
      // Repeated within the aggregation window, this event is counted up with a PATCH.
      this.events.rest.intend('PATCH', this.events.path(namespace, name));
      this.seen.set(key, { name, namespace, count: prior?.count ?? 1, firstTimestamp: prior?.firstTimestamp ?? now });
      this.trim(this.seen);
      this.opts.onResult?.('created');
    } catch (err) {
      this.opts.onResult?.('failed');
      this.log.warn('cannot record event', { reason, kind: t.kind, name: t.name, ...errorFields(err) });
    }
  }
}
