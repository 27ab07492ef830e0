import type { V1ListMeta, V1ObjectMeta } from '@kubernetes/client-node';

/** Kubernetes int-or-string: a number or a string such as "2" or "20%". */
export type IntOrString = number | string;

/** RFC 3339 time as it travels on the wire ("2024-05-01T10:00:00Z"). */
export type Rfc3339 = string;

/**
 * Envelope of an API object. apiVersion and kind are optional because list items returned by the
 * API server omit them.
 */
export interface KubeObject<Spec, Status> {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec: Spec;
  status?: Status;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ListMeta;
  items: T[];
}

/** A secret reference "<namespace>/<name>" (NodeImage pull secrets). */
export interface ReferenceObject {
  namespace?: string;
  name?: string;
}

/** Metadata handed to CRI PullImage as the pod sandbox config. */
export interface SandboxConfig {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
