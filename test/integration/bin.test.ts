import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { clusterEnv } from '../helpers/kube.js';

// The built entry points (npm test builds before jest runs).
const dist = join(import.meta.dirname, '..', '..', 'dist');
function run(bin: string, args: string[], env: NodeJS.ProcessEnv = {}): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [join(dist, bin), ...args], { env: { PATH: process.env['PATH'], ...env }, encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('entry points', () => {
  it.each(['daemon/main.js', 'manager/main.js'])('%s --help lists flags with defaults, including --kubeconfig', (bin) => {
    const r = run(bin, ['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('--kubeconfig value');
    expect(r.out).toContain('default:');
    expect(r.out).toContain('--version');
  });

  it.each(['daemon/main.js', 'manager/main.js'])('%s --version prints the package version', (bin) => {
    expect(run(bin, ['--version']).out).toMatch(/^kruise-(daemon|manager) \d+\.\d+\.\d+\n$/);
  });

  it('rejects unknown flags with exit 2', () => {
    const r = run('daemon/main.js', ['--frobnicate']);
    expect(r.code).toBe(2);
    expect(r.err).toContain("Unknown option '--frobnicate'");
  });

  it('explains a missing node name and a missing kubeconfig', () => {
    const noNode = run('daemon/main.js', []);
    expect(noNode.code).toBe(1);
    expect(noNode.err).toContain('no node name: set NODE_NAME');
    const noKube = run('daemon/main.js', ['--kubeconfig', '/nonexistent/kubeconfig'], { NODE_NAME: 'n1' });
    expect(noKube.code).toBe(1);
    expect(noKube.err).toContain('--kubeconfig /nonexistent/kubeconfig does not exist');
    const manager = run('manager/main.js', [], { HOME: '/nonexistent' });
    expect(manager.code).toBe(1);
    expect(manager.err).toContain('no Kubernetes configuration');
  });

  it('a manager that cannot start says what to do and exits instead of hanging on its open ports', () => {
    const r = run('manager/main.js', ['--kubeconfig', clusterEnv().kubeconfig, '--namespace', 'kruise-ts-no-such-namespace', '--metrics-addr', '127.0.0.1:0', '--health-probe-addr', '127.0.0.1:0', '--webhook-port', '19999']);
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('namespace kruise-ts-no-such-namespace does not exist: install kruise-ts with kubectl apply -k deploy/');
  });
});
