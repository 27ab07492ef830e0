import type { V1ObjectMeta } from '@kubernetes/client-node';

/** Kubernetes int-or-string: a number or a string such as "2" or "20%". */
export type IntOrString = number | string;

/** RFC 3339 time as it travels on the wire ("2024-05-01T10:00:00Z"). */
export type Rfc3339 = string;

/**
 * A client-node model as it travels on the wire and as kube/rest.ts hands it over: client-node's
 * classes say Date where the JSON carries RFC 3339 strings, and nothing here revives them.
 */
export type Wire<T> = T extends Date
  ? Rfc3339
  : T extends ReadonlyArray<infer U>
    ? Array<Wire<U>>
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

export type ObjectMeta = Wire<V1ObjectMeta>;
/** List metadata; written out because client-node calls `continue` `_continue`. */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/**
 * The least every object has. apiVersion and kind are optional because list items returned by the
 * API server omit them.
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** A kind with a spec and a status, such as the custom resources of apps.kruise.io. */
export interface CustomObject<Spec, Status> extends KubeObject {
  spec: Spec;
  status?: Status;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

/** A secret reference "<namespace>/<name>" (NodeImage pull secrets). */
export interface ReferenceObject {
  namespace?: string;
  name?: string;
  /** v1beta1 only: "batch" marks a copy upstream's controller shares between jobs. */
  mode?: string;
}

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: Rfc3339;
  reason: string;
  message: string;
}

/** Metadata handed to CRI PullImage as the pod sandbox config. */
export interface SandboxConfig {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
