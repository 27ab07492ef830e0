import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flagsSection, metricsSection, renderReadme, replaceSection } from '../../hack/reference-docs.js';
import { daemonFlags } from '../../daemon/options.js';
import { managerFlags } from '../../manager/options.js';

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

describe('README reference tables', () => {
  it('match the flags and metrics the binaries define (regenerate: node dist/hack/reference-docs.js)', () => {
    expect(renderReadme(readme)).toBe(readme);
  });

  it('list every flag of both binaries and every kruise metric', () => {
    for (const f of [...Object.values(daemonFlags), ...Object.values(managerFlags)]) expect(flagsSection()).toContain(`\`--${f.name}\``);
    expect(metricsSection()).toMatch(/kruise_daemon_image_pulls_total` \| counter \| `result`, `reason`/);
    expect(metricsSection()).toContain('`kruise_manager_leader` | gauge');
  });

  it('replaces only the marked section and refuses a README without one', () => {
    expect(replaceSection('a\n<!-- x:begin -->\nold\n<!-- x:end -->\nb', 'x', 'new')).toBe('a\n<!-- x:begin -->\nnew\n<!-- x:end -->\nb');
    expect(() => replaceSection('no markers', 'x', 'new')).toThrow(/no <!-- x:begin -->/);
  });

  it('has the two set-up commands and a section per CRD', () => {
    expect(readme).toContain('npm run demo');
    expect(readme).toContain('bash hack/test.sh');
    for (const kind of ['ImagePullJob', 'ImageListPullJob', 'ContainerRecreateRequest', 'NodeImage']) expect(readme).toContain(`kind: ${kind}\n`);
  });
});
