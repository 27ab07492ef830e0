import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

// The `install` project's environment: a local cluster of its own (its own name, ports and
// addresses, so it never meets the integration project's), on which the suite installs kruise-ts as
// a user would, from the image, with `kubectl apply -k`. KRUISE_TS_INSTALL_ENV_JSON hands in a
// running environment instead (its kruise-ts pods are installed over, and left removed).
export default function installSetup(): void {
  const given = process.env['KRUISE_TS_INSTALL_ENV_JSON'];
  if (given) {
    if (!existsSync(given)) throw new Error(`KRUISE_TS_INSTALL_ENV_JSON=${given} does not exist; run hack/env-up.sh first`);
    process.env['KRUISE_TS_ENV_JSON'] = given;
    return;
  }
  if (process.getuid?.() !== 0) throw new Error('the install suite starts containerd and a local cluster and must run as root (or set KRUISE_TS_INSTALL_ENV_JSON)');
  for (const f of ['dist/hack/install-pods.js', 'dist/daemon/main.js']) {
    if (!existsSync(join(root, f))) throw new Error(`${f} is missing: run npm run build (npm test does)`);
  }
  const offset = Number(process.env['KRUISE_TS_PORT_OFFSET'] ?? '0') + 2500;
  execFileSync('bash', [join(root, 'hack', 'env-up.sh')], { stdio: 'inherit', env: { ...process.env, KRUISE_TS_ENV: 'install', KRUISE_TS_PORT_OFFSET: String(offset) } });
  process.env['KRUISE_TS_ENV_JSON'] = '/tmp/kruise-ts-install/env.json';
  process.env['KRUISE_TS_INSTALL_ENV_STARTED_BY_JEST'] = '1';
}
