import type { Secret } from '../../api/types/core.js';
// The writing half of the pull-secret sync: claims and releases copies in the daemon's namespace
// with optimistic concurrency, so jobs sharing a copy never drop each other from it.
import type { ReferenceObject } from '../../api/types/common.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { Informer } from '../../kube/informer.js';
import { ApiError, type RestClient } from '../../kube/rest.js';
import { core, Resource } from '../../kube/resource.js';
import { createIfMissing } from '../../kube/write.js';
import { secretsByJobReference } from '../informers.js';
import { copyName, desiredCopy, releasedCopy } from './secrets.js';
import { jobKey } from './target.js';

function sourceKey(s: Secret): string {
  return `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`;
}

const ATTEMPTS = 8;

export interface Claimed {
  /** References for the job's NodeImage entries, in the job's order. */
  refs: ReferenceObject[];
  /** Source secrets that do not exist. */
  missing: string[];
}

export class PullSecretSync {
  private readonly api: Resource<Secret>;

  constructor(
    rest: RestClient,
    private readonly secrets: Informer<Secret>,
    readonly daemonNamespace: string,
  ) {
    this.api = new Resource<Secret>(rest, core.secrets);
  }

  /** Makes sure a copy of each of the job's secrets exists, current and listing the job. */
  async claim(job: ImagePullJob): Promise<Claimed> {
    const ns = job.metadata?.namespace ?? '';
    const names = [...new Set(job.spec.pullSecrets ?? [])];
    const out: Claimed = { refs: [], missing: [] };
    for (const name of names) {
      // A job living in the daemon's namespace hands its secrets over as they are.
      if (ns === this.daemonNamespace) {
        if (await this.read(ns, name)) out.refs.push({ namespace: ns, name });
        else out.missing.push(name);
        continue;
      }
      const source = await this.read(ns, name);
      if (!source) {
        out.missing.push(name);
        continue;
      }
      await this.ensureCopy(source, jobKey(job));
      out.refs.push({ namespace: this.daemonNamespace, name: copyName(ns, name) });
    }
    return out;
  }

  /** Takes the job off every copy it is listed on, except those named in `keep`. */
  async release(job: ImagePullJob, keep: ReadonlySet<string> = new Set()): Promise<void> {
    const key = jobKey(job);
    const ns = job.metadata?.namespace ?? '';
    const candidates = new Set(
      this.secrets
        .byIndex(secretsByJobReference, key)
        .filter((s) => s.metadata?.namespace === this.daemonNamespace)
        .map((s) => s.metadata?.name ?? ''),
    );
    // A copy claimed a moment ago may not be in the cache yet; its name is known.
    if (ns !== this.daemonNamespace) for (const name of job.spec.pullSecrets ?? []) candidates.add(copyName(ns, name));
    for (const name of candidates) if (!keep.has(name)) await this.releaseOne(name, key);
  }

  private async read(namespace: string, name: string): Promise<Secret | undefined> {
    const cached = this.secrets.get(`${namespace}/${name}`);
    if (cached) return cached;
    try {
      return await this.api.get(namespace, name);
    } catch (err) {
      if (err instanceof ApiError && err.notFound) return undefined;
      throw err;
    }
  }

  private async ensureCopy(source: Secret, job: string): Promise<void> {
    const name = copyName(source.metadata?.namespace ?? '', source.metadata?.name ?? '');
    let current: Secret | undefined = this.secrets.get(`${this.daemonNamespace}/${name}`);
    for (let i = 0; i < ATTEMPTS; i++) {
      const want = desiredCopy(source, current, job, this.daemonNamespace);
      if (!want) return;
      try {
        if (!current) {
          if (await createIfMissing(this.api, want)) return;
        } else {
          await this.api.update(want);
          return;
        }
      } catch (err) {
        if (!current && err instanceof ApiError && err.notFound) {
          throw new Error(`cannot copy pull secret ${sourceKey(source)}: namespace ${this.daemonNamespace} does not exist (the installer creates it)`, { cause: err });
        }
        if (!(err instanceof ApiError && (err.conflict || err.notFound))) throw err;
      }
      // Created, changed or deleted meanwhile: look again.
      current = await this.read404(name);
    }
    throw new Error(`cannot claim pull secret copy ${this.daemonNamespace}/${name}: it kept changing for ${ATTEMPTS} attempts`);
  }

  private async releaseOne(name: string, job: string): Promise<void> {
    let current = this.secrets.get(`${this.daemonNamespace}/${name}`) ?? (await this.read404(name));
    for (let i = 0; i < ATTEMPTS && current; i++) {
      const next = releasedCopy(current, job);
      if (!next) return;
      try {
        if (next === 'delete') {
          // Only if nobody claimed it since it was read; otherwise read again and just let go.
          await this.api.delete(this.daemonNamespace, name, { resourceVersion: current.metadata?.resourceVersion ?? '' });
        } else {
          await this.api.update(next);
        }
        return;
      } catch (err) {
        if (err instanceof ApiError && err.notFound) return;
        if (!(err instanceof ApiError && err.conflict)) throw err;
      }
      current = await this.read404(name);
    }
  }

  private async read404(name: string): Promise<Secret | undefined> {
    try {
      return await this.api.get(this.daemonNamespace, name);
    } catch (err) {
      if (err instanceof ApiError && err.notFound) return undefined;
      throw err;
    }
  }
}
