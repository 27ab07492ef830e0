import { spawn } from 'node:child_process';
import { join } from 'node:path';

// The README's main command, end to end and non-interactive: its own environment (registry, local
// cluster with real nodes), kruise-ts installed as pods from its image, the examples applied, a summary, nothing left running.
const root = join(import.meta.dirname, '..', '..');

function run(cmd: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('npm run demo', () => {
  it('runs every example to success, prints the summary and stops what it started', async () => {
    // Its own environment name and ports, next to the one the other suites use.
    const offset = Number(process.env['KRUISE_TS_PORT_OFFSET'] ?? '0') + 1500;
    const r = await run('npm', ['run', '--silent', 'demo'], { KRUISE_TS_DEMO_ENV: 'demotest', KRUISE_TS_DEMO_PORT_OFFSET: String(offset) }, 900_000);
    if (r.code !== 0) console.error(r.out.slice(-6000));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/kruise-ts:[\w.-]+ installed with kubectl apply -k .*: every pod Ready/);
    expect(r.out).toContain('==> summary');
    for (const line of ['OK     ImagePullJob prewarm-nginx', 'OK     ImageListPullJob prewarm-base-images', 'OK     ContainerRecreateRequest restart-demo-app', 'OK     CloneSet web: nginx:1.26 pre-downloaded on the node of its old pods only']) expect(r.out).toContain(line);
    expect(r.out).toContain('demo finished: everything succeeded');
    expect(r.out).toContain("environment 'demotest' stopped and removed");
    // Nothing of the demo's environment is left running.
    const left = await run('bash', ['-c', "pgrep -af '[k]ruise-ts-demotest' || true"], {}, 10_000);
    expect(left.out.trim()).toBe('');
  }, 900_000);
});
