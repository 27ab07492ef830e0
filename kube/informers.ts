import { Informer, type InformerOptions } from './informer.js';
import type { Logger } from './log.js';
import type { KubeObject } from '../api/types/common.js';
import { Resource, type ResourceType } from './resource.js';
import type { RestClient } from './rest.js';

/**
 * One informer per resource type and selector, shared by every controller that asks for it, as
 * client-go's SharedInformerFactory: one watch per resource, one cache in memory.
 */
export class InformerFactory {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private signal: AbortSignal | undefined;

  constructor(
    private readonly rest: RestClient,
    private readonly logger?: Logger,
    /** Options every informer of this factory gets (the manager's interning transform). */
    private readonly defaults: Pick<InformerOptions, 'transform' | 'sheddingBackoffMaxMs'> = {},
  ) {}

  informer<T extends KubeObject>(type: ResourceType, opts: Omit<InformerOptions, 'logger'> = {}): Informer<T> {
    const key = `${type.group}/${type.version}/${type.plural}|${opts.namespace ?? ''}|${opts.labelSelector ?? ''}|${opts.fieldSelector ?? ''}`;
    let inf = this.informers.get(key) as Informer<T> | undefined;
    if (!inf) {
      inf = new Informer<T>(new Resource<T>(this.rest, type), { ...this.defaults, ...opts, logger: this.logger?.child({ informer: type.plural }) });
      this.informers.set(key, inf as unknown as Informer<KubeObject>);
      if (this.signal) void inf.run(this.signal);
    }
    return inf;
  }

  /**
   * An informer built with this factory's options that is not shared and not started by it: for
   * one that comes and goes with its resource (a workload kind whose CRD appears and disappears),
   * which its owner runs and stops.
   */
  unshared<T extends KubeObject>(type: ResourceType, logger?: Logger): Informer<T> {
    return new Informer<T>(new Resource<T>(this.rest, type), { ...this.defaults, logger: logger ?? this.logger?.child({ informer: type.plural }) });
  }

  /** Starts every informer asked for so far, and any asked for later. */
  start(signal: AbortSignal): void {
    this.signal = signal;
    for (const inf of this.informers.values()) void inf.run(signal);
  }

  async waitForSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.synced));
  }

  allSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }
}
