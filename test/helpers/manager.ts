import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Installation } from '../../hack/kruise.js';
import { clusterEnv } from './kube.js';

/** The kruise-ts installation global setup started on this environment. */
export function installation(): Installation {
  return JSON.parse(readFileSync(join(clusterEnv().envDir, 'kruise', 'installation.json'), 'utf8')) as Installation;
}

/** One Prometheus text exposition, as {"name{labels}": value}. */
export async function scrape(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/** Sum of the samples of `metric` whose labels contain every `match` pair. */
export function sum(metrics: Map<string, number>, metric: string, match: Record<string, string> = {}, exclude: Record<string, string> = {}): number {
  let total = 0;
  for (const [k, v] of metrics) {
    if (!k.startsWith(`${metric}{`) && k !== metric) continue;
    if (!Object.entries(match).every(([l, x]) => k.includes(`${l}="${x}"`))) continue;
    if (Object.entries(exclude).some(([l, x]) => k.includes(`${l}="${x}"`))) continue;
    total += v;
  }
  return total;
}

/** API writes (create, update, patch, delete) the manager made, optionally excluding some resources. */
export function writes(metrics: Map<string, number>, excludeResources: string[] = ['leases']): number {
  let total = 0;
  for (const verb of ['create', 'update', 'patch', 'delete']) {
    total += sum(metrics, 'kruise_manager_api_requests_total', { verb });
    for (const r of excludeResources) total -= sum(metrics, 'kruise_manager_api_requests_total', { verb, resource: r });
  }
  return total;
}
