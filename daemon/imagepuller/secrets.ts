import type { Secret } from '../../api/types/core.js';
import type { ReferenceObject } from '../../api/types/common.js';
import { ApiError } from '../../kube/rest.js';
import type { Resource } from '../../kube/resource.js';
import { CredentialError, parseDockerSecret, type KeyringEntry } from './credentials.js';

/** How long a read secret is reused before the next attempt reads it again. */
const TTL_MS = 30_000;

/**
 * Reads pull secrets for the daemon, only from its own secret namespace (the manager copies job
 * secrets there; the daemon is never allowed anywhere else). Reads are cached briefly so the tags
 * of one job share one GET, while a changed secret reaches the next attempt within TTL_MS.
 */
export class SecretSource {
  private readonly cache = new Map<string, { at: number; entries: Promise<KeyringEntry[]> }>();

  constructor(
    private readonly secrets: Resource<Secret>,
    private readonly namespace: string,
  ) {}

  /** Keyring entries of every referenced secret, in reference order. */
  async keyring(refs: readonly ReferenceObject[]): Promise<KeyringEntry[]> {
    const all: KeyringEntry[] = [];
    for (const ref of refs) all.push(...(await this.entries(ref)));
    return all;
  }

  private entries(ref: ReferenceObject): Promise<KeyringEntry[]> {
    const ns = ref.namespace ?? '';
    const name = ref.name ?? '';
    if (ns !== this.namespace) {
      return Promise.reject(
        new CredentialError(`pull secret ${ns}/${name} is outside the daemon's secret namespace ${this.namespace}; the daemon reads secrets only there`),
      );
    }
    const key = `${ns}/${name}`;
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.entries;
    const entries = this.secrets.get(ns, name).then(
      (s) => parseDockerSecret(s),
      (err: unknown) => {
        this.cache.delete(key);
        if (err instanceof ApiError && err.notFound) throw new Error(`pull secret ${key} not found`);
        throw err;
      },
    );
    // A malformed secret stays cached like a good one: re-reading it would not fix it.
    this.cache.set(key, { at: Date.now(), entries });
    return entries;
  }
}
