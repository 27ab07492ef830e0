import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadClusterAccess, loadManagerClusterAccess, PluginAuthError } from '../../kube/kubeconfig.js';

function kubeconfig(dir: string, name: string, user: Record<string, unknown>): string {
  const path = join(dir, name);
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'c',
    contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
    clusters: [{ name: 'k', cluster: { server: 'https://127.0.0.1:6443', 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user }],
  };
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

describe('kubeconfig readers', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kts-kubeconfig-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a token kubeconfig with the lean reader, for the daemon and the manager alike', async () => {
    const path = kubeconfig(dir, 'token', { token: 'abc' });
    expect(await loadClusterAccess(path).headers()).toEqual({ Authorization: 'Bearer abc' });
    const manager = await loadManagerClusterAccess(path);
    expect(manager.server).toBe('https://127.0.0.1:6443');
    expect(manager.insecureSkipTlsVerify).toBe(true);
    expect(await manager.headers()).toEqual({ Authorization: 'Bearer abc' });
  });

  it('refuses an exec plugin in the daemon and runs it through client-node in the manager', async () => {
    const plugin = join(dir, 'plugin.sh');
    writeFileSync(
      plugin,
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'\n`,
    );
    chmodSync(plugin, 0o755);
    const path = kubeconfig(dir, 'exec', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } });
    expect(() => loadClusterAccess(path)).toThrow(PluginAuthError);
    expect(() => loadClusterAccess(path)).toThrow(/needs an exec or auth-provider plugin/);
    const manager = await loadManagerClusterAccess(path);
    expect(manager.server).toBe('https://127.0.0.1:6443');
    expect(await manager.headers()).toEqual({ Authorization: 'Bearer from-plugin' });
  });

  it('passes any other error through: a broken kubeconfig is not handed to client-node', async () => {
    const path = join(dir, 'broken');
    writeFileSync(path, '{"current-context": "nowhere"}');
    await expect(loadManagerClusterAccess(path)).rejects.toThrow(/has no current context/);
  });
});
