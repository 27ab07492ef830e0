// Installs deploy/crds into the cluster an env.json describes (demo and benchmarks).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadClusterAccess } from '../kube/kubeconfig.js';
import { installCrds } from '../kube/crds.js';
import { RestClient } from '../kube/rest.js';

const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as { kubeconfig: string };
const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
const names = await installCrds(rest, join(import.meta.dirname, '..', '..', 'deploy', 'crds'));
console.log(`CRDs established: ${names.join(', ')}`);
await rest.close();
