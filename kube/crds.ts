import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { sleep } from './informer.js';
import { ApiError, type RestClient } from './rest.js';
import type { KubeObject } from '../api/types/common.js';
import { core, Resource } from './resource.js';

interface Crd extends KubeObject {
  spec?: { names?: { plural?: string } };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

const ESTABLISHED_TIMEOUT_MS = 60_000;

/** Creates or updates every CustomResourceDefinition in `dir` and waits until each is Established. */
export async function installCrds(rest: RestClient, dir: string): Promise<string[]> {
  const crds = new Resource<Crd>(rest, core.crds);
  const names: string[] = [];
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
  return names;
}
