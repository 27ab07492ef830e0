import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export default function globalTeardown(): void {
  const root = join(import.meta.dirname, '..', '..');
  execFileSync(process.execPath, [join(root, 'dist', 'hack', 'kruise.js'), 'down', process.env['KRUISE_TS_ENV_JSON'] ?? ''], { stdio: 'inherit' });
  if (process.env['KRUISE_TS_ENV_STARTED_BY_JEST'] !== '1' || process.env['KRUISE_TS_KEEP_ENV'] === '1') return;
  execFileSync('bash', [join(root, 'hack', 'env-down.sh')], { stdio: 'inherit' });
}
