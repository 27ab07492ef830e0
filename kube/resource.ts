import type { KubeList, KubeObject, ListMeta } from '../api/types/common.js';
import { ApiError, type RestClient, type Query, type WatchEvent } from './rest.js';
import type { Priority } from './ratelimit.js';

export interface ResourceType {
  group: string;
  version: string;
  /** Lower-case plural, as in the URL. */
  plural: string;
  kind: string;
  namespaced: boolean;
  /**
   * When the served version's JSON differs from the one the code works with: `decode` turns what
   * the server sends into the working shape, `encode` the working shape into what it accepts.
   */
  codec?: Codec;
}

export interface Codec {
  decode(wire: KubeObject): KubeObject;
  encode(model: KubeObject): KubeObject;
}

export const PATCH_MERGE = 'application/merge-patch+json';
export const PATCH_JSON = 'application/json-patch+json';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  limit?: number;
  continue?: string | undefined;
}

/** "group/version", or "version" for the core group. */
export function apiVersionOf(type: ResourceType): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/**
 * Typed access to one resource type through the shared RestClient: paths, verbs, subresources; the
 * type's codec, if any, applied to every object read and written (patches are the caller's).
 */
export class Resource<T extends KubeObject> {
  constructor(
    readonly rest: RestClient,
    readonly type: ResourceType,
  ) {}

  get apiVersion(): string {
    return apiVersionOf(this.type);
  }

  /** Collection path; namespace undefined means all namespaces (or cluster-scoped). */
  path(namespace?: string, name?: string, subresource?: string): string {
    // '' would make `namespaces//…`, which the API server reads as another path altogether.
    if (this.type.namespaced && namespace === '') throw new Error(`${this.type.plural}: an empty namespace names no ${this.type.kind} (undefined means all namespaces)`);
    const base = this.type.group === '' ? `/api/${this.type.version}` : `/apis/${this.type.group}/${this.type.version}`;
    const ns = this.type.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    let p = `${base}${ns}/${this.type.plural}`;
    if (name !== undefined) p += `/${encodeURIComponent(name)}`;
    if (subresource !== undefined) p += `/${subresource}`;
    return p;
  }

  /** The GET a conflict would make (RestClient.intend). */
  mayGet(namespace: string | undefined, name: string): void {
    this.rest.intend('GET', this.path(namespace, name));
  }

  async get(namespace: string | undefined, name: string, priority?: Priority): Promise<T> {
    return this.decode(await this.rest.request<T>('GET', this.path(namespace, name), priority !== undefined ? { priority } : {}));
  }

  /**
   * Served from the API server's watch cache (resourceVersion=0): no read through to etcd, at the
   * price of possibly being a moment behind it.
   */
  async getFromCache(namespace: string | undefined, name: string, priority?: Priority): Promise<T> {
    return this.decode(await this.rest.request<T>('GET', this.path(namespace, name), { query: { resourceVersion: '0' }, ...(priority !== undefined ? { priority } : {}) }));
  }

  /** One page or, with no limit, everything. */
  async list(namespace: string | undefined, o: ListOptions = {}, signal?: AbortSignal): Promise<KubeList<T>> {
    const page = await this.rest.request<KubeList<T>>('GET', this.path(namespace), {
      query: { labelSelector: o.labelSelector, fieldSelector: o.fieldSelector, resourceVersion: o.resourceVersion, limit: o.limit, continue: o.continue },
      signal,
    });
    return this.type.codec ? { ...page, items: page.items.map((i) => this.decode(i)) } : page;
  }

  /**
   * A list, its items handed to `onItem` as they stream in, for lists too big to hold whole twice
   * (a cluster's NodeImages); returns the list's metadata (resourceVersion, continue).
   */
  listEach(namespace: string | undefined, o: ListOptions, onItem: (item: T) => void, signal?: AbortSignal): Promise<ListMeta> {
    return this.rest.listEach<T>(
      this.path(namespace),
      { query: { labelSelector: o.labelSelector, fieldSelector: o.fieldSelector, resourceVersion: o.resourceVersion, limit: o.limit, continue: o.continue }, signal },
      (item) => onItem(this.decode(item)),
    );
  }

  /**
   * Every page of a list read from etcd (a consistent read), items handed to `onItem` as they
   * stream in; returns the last page's metadata, whose resourceVersion is the list's. A page the
   * API server could not serve within its request timeout (504) is asked again half as big from the
   * same continue token, keeping the pages read: at 50 jobs over 2,000 nodes one page of 500
   * NodeImages took it over 60 s, and starting over from the first page (client-go's pager and
   * reflector) met the same timeout on the second, time after time. The token holds the list's
   * version until etcd compacts it (410: the caller starts over). At one object a page, the 504 is thrown.
   */
  async listEachPaged(
    namespace: string | undefined,
    o: Pick<ListOptions, 'labelSelector' | 'fieldSelector'>,
    pageSize: number,
    onItem: (item: T) => void,
    opts: { signal?: AbortSignal; onPageTimeout?: (err: ApiError, limit: number, firstPage: boolean) => void } = {},
  ): Promise<ListMeta> {
    let cont: string | undefined;
    let limit = pageSize;
    for (;;) {
      let meta: ListMeta;
      try {
        meta = await this.listEach(namespace, { ...o, limit, continue: cont }, onItem, opts.signal);
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 504) || limit <= 1 || opts.signal?.aborted) throw err;
        limit = Math.floor(limit / 2);
        opts.onPageTimeout?.(err, limit, cont === undefined);
        continue;
      }
      cont = meta.continue || undefined;
      if (!cont) return meta;
    }
  }

  async create(obj: T): Promise<T> {
    return this.decode(await this.rest.request<T>('POST', this.path(obj.metadata?.namespace), { body: this.stamp(obj) }));
  }

  /** PUT with the object's resourceVersion: a stale copy fails with 409 Conflict. */
  async update(obj: T): Promise<T> {
    return this.decode(await this.rest.request<T>('PUT', this.path(obj.metadata?.namespace, this.nameOf(obj)), { body: this.stamp(obj) }));
  }

  async updateStatus(obj: T, priority?: Priority): Promise<T> {
    return this.decode(
      await this.rest.request<T>('PUT', this.path(obj.metadata?.namespace, this.nameOf(obj), 'status'), { body: this.stamp(obj), ...(priority !== undefined ? { priority } : {}) }),
    );
  }

  async patch(namespace: string | undefined, name: string, patch: unknown, contentType: string = PATCH_MERGE, subresource?: string): Promise<T> {
    return this.decode(await this.rest.request<T>('PATCH', this.path(namespace, name, subresource), { body: patch, contentType }));
  }

  patchStatus(namespace: string | undefined, name: string, patch: unknown, contentType: string = PATCH_MERGE): Promise<T> {
    return this.patch(namespace, name, patch, contentType, 'status');
  }

  /**
   * Deletes; with `uid` the server refuses if the name now belongs to another object, with
   * `resourceVersion` if the object changed since it was read (409 Conflict either way).
   */
  async delete(
    namespace: string | undefined,
    name: string,
    o: { uid?: string; resourceVersion?: string; propagationPolicy?: string; gracePeriodSeconds?: number } = {},
  ): Promise<void> {
    const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
    if (o.uid || o.resourceVersion) {
      body['preconditions'] = { ...(o.uid ? { uid: o.uid } : {}), ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}) };
    }
    if (o.propagationPolicy) body['propagationPolicy'] = o.propagationPolicy;
    if (o.gracePeriodSeconds !== undefined) body['gracePeriodSeconds'] = o.gracePeriodSeconds;
    await this.rest.request<unknown>('DELETE', this.path(namespace, name), { body });
  }

  watch(namespace: string | undefined, query: Query, onEvent: (ev: WatchEvent<T>) => void, signal: AbortSignal): Promise<void> {
    const codec = this.type.codec;
    const handler = codec ? (ev: WatchEvent<T>): void => onEvent(ev.type === 'BOOKMARK' || ev.type === 'ERROR' ? ev : { ...ev, object: this.decode(ev.object) }) : onEvent;
    return this.rest.watch<T>(this.path(namespace), query, handler, signal);
  }

  private nameOf(obj: T): string {
    const n = obj.metadata?.name;
    if (!n) throw new Error(`${this.type.kind} without metadata.name`);
    return n;
  }

  private stamp(obj: T): T {
    const wire = (this.type.codec ? this.type.codec.encode(obj) : obj) as T;
    return { ...wire, apiVersion: this.apiVersion, kind: this.type.kind };
  }

  private decode(obj: T): T {
    return this.type.codec ? (this.type.codec.decode(obj) as T) : obj;
  }
}

/** namespace/name, or name for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}

export const core = {
  pods: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  nodes: { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
  secrets: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  serviceaccounts: { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  configmaps: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  namespaces: { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
  events: { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  controllerrevisions: { group: 'apps', version: 'v1', plural: 'controllerrevisions', kind: 'ControllerRevision', namespaced: true },
  crds: { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false },
  mutatingwebhookconfigurations: { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'mutatingwebhookconfigurations', kind: 'MutatingWebhookConfiguration', namespaced: false },
  validatingwebhookconfigurations: { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false },
} as const satisfies Record<string, ResourceType>;
