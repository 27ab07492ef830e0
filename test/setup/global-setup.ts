import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

// Brings the real local environment up once per jest run, unless one is handed in.
export default function globalSetup(): void {
  const given = process.env['KRUISE_TS_ENV_JSON'];
  if (given) {
    if (!existsSync(given)) throw new Error(`KRUISE_TS_ENV_JSON=${given} does not exist; run hack/env-up.sh first`);
    return;
  }
  if (process.getuid?.() !== 0) {
    throw new Error('integration tests start containerd and a local cluster and must run as root (or set KRUISE_TS_ENV_JSON)');
  }
  const root = join(import.meta.dirname, '..', '..');
  const envName = process.env['KRUISE_TS_ENV'] ?? 'test';
  execFileSync('bash', [join(root, 'hack', 'env-up.sh')], { stdio: 'inherit', env: { ...process.env, KRUISE_TS_ENV: envName } });
  process.env['KRUISE_TS_ENV_JSON'] = `/tmp/kruise-ts-${envName}/env.json`;
  process.env['KRUISE_TS_ENV_STARTED_BY_JEST'] = '1';
}
