// Renders this repository's kustomizations without kubectl: `bases` and `resources` (files, and
// directories with their own kustomization.yaml) and `images` (name -> newName:newTag) are all
// deploy/ uses.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadAll, load } from 'js-yaml';
import type { KubeObject } from '../api/types/common.js';

interface Kustomization {
  bases?: string[];
  resources?: string[];
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
}

export type Rendered = KubeObject & Record<string, unknown>;

function containersOf(o: Rendered): Array<{ image?: string }> {
  const spec = (o['spec'] as { template?: { spec?: { containers?: Array<{ image?: string }>; initContainers?: Array<{ image?: string }> } } } | undefined)?.template?.spec;
  return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
}

export function render(dir: string): Rendered[] {
  const file = join(dir, 'kustomization.yaml');
  if (!existsSync(file)) throw new Error(`${dir} has no kustomization.yaml`);
  const k = (load(readFileSync(file, 'utf8')) ?? {}) as Kustomization;
  const out: Rendered[] = [];
  for (const r of [...(k.bases ?? []), ...(k.resources ?? [])]) {
    const p = join(dir, r);
    if (statSync(p).isDirectory()) out.push(...render(p));
    else out.push(...(loadAll(readFileSync(p, 'utf8')) as Rendered[]).filter((d) => d !== null && d !== undefined));
  }
  for (const img of k.images ?? []) {
    for (const o of out) {
      for (const c of containersOf(o)) {
        if (c.image === img.name || c.image?.startsWith(`${img.name}:`)) c.image = `${img.newName ?? img.name}${img.newTag ? `:${img.newTag}` : ''}`;
      }
    }
  }
  return out;
}

/** deploy/ itself, found from the sources and from the build alike. */
export function deployDir(): string {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'deploy', 'kustomization.yaml'))) return join(dir, 'deploy');
    if (dirname(dir) === dir) throw new Error('cannot find deploy/ above ' + import.meta.dirname);
  }
}
