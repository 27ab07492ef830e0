import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export default function installTeardown(): void {
  if (process.env['KRUISE_TS_INSTALL_ENV_STARTED_BY_JEST'] !== '1' || process.env['KRUISE_TS_KEEP_ENV'] === '1') return;
  const offset = Number(process.env['KRUISE_TS_PORT_OFFSET'] ?? '0') + 2500;
  execFileSync('bash', [join(import.meta.dirname, '..', '..', 'hack', 'env-down.sh')], { stdio: 'inherit', env: { ...process.env, KRUISE_TS_ENV: 'install', KRUISE_TS_PORT_OFFSET: String(offset) } });
}
