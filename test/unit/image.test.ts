import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// hack/build-image.sh (no network, the machine's Node.js) and the Dockerfile (for users with a
// registry to build from) make the same image: the same files in the same places, the same entry
// point and command, the same user.
const root = join(import.meta.dirname, '..', '..');
const spec = JSON.parse(readFileSync(join(root, 'hack', 'image.json'), 'utf8')) as {
  node: string;
  user: string;
  workdir: string;
  entrypoint: string[];
  cmd: string[];
  files: Array<[string, string]>;
};
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

describe('the image hack/build-image.sh makes and the Dockerfile makes', () => {
  it('hold the same files in the same places', () => {
    const copies: Array<[string, string]> = [];
    for (const m of finalStage.matchAll(/^COPY --from=build (.+)$/gm)) {
      const parts = (m[1] ?? '').split(/\s+/);
      const dest = parts.pop() ?? '';
      for (const src of parts) {
        const rel = src.replace(/^\/src\//, '');
        const target = dest.endsWith('/') ? `${dest.replace(/^\.\//, '')}${rel.split('/').pop()}` : dest.replace(/^\.\//, '');
        copies.push([rel, target]);
      }
    }
    expect(copies.sort()).toEqual([...spec.files].sort());
  });

  it('run node from the same place, as the same user, with the same default command', () => {
    // distroless/nodejs20's entrypoint is /nodejs/bin/node and its :nonroot user is 65532.
    expect(finalStage).toMatch(/^FROM gcr\.io\/distroless\/nodejs20-debian12:nonroot$/m);
    expect(spec.entrypoint).toEqual([spec.node]);
    expect(spec.node).toBe('/nodejs/bin/node');
    expect(spec.user).toBe('65532:65532');
    expect(finalStage).toMatch(new RegExp(`^WORKDIR ${spec.workdir}$`, 'm'));
    expect(finalStage).toContain(`CMD ${JSON.stringify(spec.cmd)}`);
  });

  it('are what deploy/ runs: node at that path, the daemon and the manager scripts', () => {
    const daemon = readFileSync(join(root, 'deploy', 'base', 'daemon.yaml'), 'utf8');
    const manager = readFileSync(join(root, 'deploy', 'base', 'manager.yaml'), 'utf8');
    expect(daemon).toContain(`"${spec.node}"`);
    expect(daemon).toContain('/app/dist/daemon/main.js');
    expect(manager).toMatch(/\/app\/dist\/manager\/main\.js/);
  });
});
