import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { sleep } from './informer.js';
import { ApiError, type RestClient } from './rest.js';
import type { KubeObject } from '../api/types/common.js';
import { servedPlurals } from './kruise.js';
import { core, Resource } from './resource.js';

interface Crd extends KubeObject {
  spec?: { group?: string; names?: { plural?: string }; versions?: Array<{ name: string; served?: boolean }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

const ESTABLISHED_TIMEOUT_MS = 60_000;

/**
 * Creates or updates every CustomResourceDefinition in `dir` and waits until each is Established
 * and discovery lists it in exactly the versions it serves. Established comes first: the API server's
 * discovery controller adds versions on its own queue a moment later, and a client that discovered
 * in between would take a v1beta1-and-v1alpha1 kind for v1alpha1 only and write through the
 * v1alpha1 schema, losing v1beta1's fields (a NodeImage's pullSecrets[].mode in one CI run).
 */
export async function installCrds(rest: RestClient, dir: string): Promise<string[]> {
  const crds = new Resource<Crd>(rest, core.crds);
  const names: string[] = [];
  const served: Array<{ group: string; plural: string; versions: Set<string> }> = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of loadAll(readFileSync(join(dir, file), 'utf8')) as Crd[]) {
      if (doc?.kind !== 'CustomResourceDefinition') continue;
      const name = doc.metadata?.name ?? '';
      try {
        const cur = await crds.get(undefined, name);
        await crds.update({ ...doc, metadata: { ...doc.metadata, resourceVersion: cur.metadata?.resourceVersion ?? '' } });
      } catch (err) {
        if (!(err instanceof ApiError && err.notFound)) throw err;
        await crds.create(doc);
      }
      names.push(name);
      const versions = new Set((doc.spec?.versions ?? []).filter((v) => v.served !== false).map((v) => v.name));
      served.push({ group: doc.spec?.group ?? '', plural: doc.spec?.names?.plural ?? '', versions });
    }
  }
  const deadline = Date.now() + ESTABLISHED_TIMEOUT_MS;
  for (const name of names) {
    for (;;) {
      const cur = await crds.get(undefined, name);
      if (cur.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} not Established after ${ESTABLISHED_TIMEOUT_MS} ms`);
      await sleep(100);
    }
  }
  // A version a CRD no longer serves (one replaced by a CRD serving fewer) leaves discovery late too.
  // One discovery read per group-version and look covers every CRD of that group.
  const groupVersions = new Map<string, Set<string>>();
  for (const c of served) for (const v of c.versions) groupVersions.set(c.group, (groupVersions.get(c.group) ?? new Set()).add(v));
  for (const [group, versions] of groupVersions) {
    for (const version of versions) {
      for (;;) {
        const listed = await servedPlurals(rest, version, group);
        const behind = served.filter((c) => c.group === group && listed.has(c.plural) !== c.versions.has(version)).map((c) => c.plural);
        if (behind.length === 0) break;
        if (Date.now() > deadline) throw new Error(`discovery of /apis/${group}/${version} does not yet agree with the CRDs for ${behind.join(', ')} after ${ESTABLISHED_TIMEOUT_MS} ms`);
        await sleep(100);
      }
    }
  }
  return names;
}
