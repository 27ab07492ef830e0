import { bool, FlagError, helpText, num, parseFlags, str } from '../../kube/flags.js';
import { explicitEndpoint } from '../../daemon/options.js';

const specs = {
  name: str('node-name', '', 'node', 'NODE_NAME'),
  workers: num('max-workers', 5, 'workers', 'MAX_WORKERS', (v) => (v >= 1 ? undefined : 'must be at least 1')),
  leader: bool('enable-leader-election', true, 'leader election'),
};

describe('flags', () => {
  it('takes argv over environment over defaults', () => {
    expect(parseFlags(specs, [], {})).toMatchObject({ name: '', workers: 5, leader: true, help: false });
    expect(parseFlags(specs, [], { NODE_NAME: 'n1', MAX_WORKERS: '7' })).toMatchObject({ name: 'n1', workers: 7 });
    expect(parseFlags(specs, ['--node-name', 'n2', '--max-workers=9', '--no-enable-leader-election'], { NODE_NAME: 'n1' })).toMatchObject({
      name: 'n2',
      workers: 9,
      leader: false,
    });
  });

  it("takes a boolean's value after = as Go's flags do (--name=true, --name=false)", () => {
    expect(parseFlags(specs, ['--enable-leader-election=false'], {})).toMatchObject({ leader: false });
    expect(parseFlags(specs, ['--enable-leader-election=true'], {})).toMatchObject({ leader: true });
    expect(() => parseFlags(specs, ['--enable-leader-election=maybe'], {})).toThrow('--enable-leader-election: expected true or false, got "maybe"; see --help');
  });

  it('rejects bad input with the flag named', () => {
    expect(() => parseFlags(specs, ['--max-workers', 'many'], {})).toThrow(new FlagError('--max-workers: expected a number, got "many"'));
    expect(() => parseFlags(specs, ['--max-workers', '0'], {})).toThrow('--max-workers: must be at least 1');
    expect(() => parseFlags(specs, ['--nope'], {})).toThrow(/Unknown option '--nope'; see --help/);
    expect(() => parseFlags(specs, [], { MAX_WORKERS: 'x' })).toThrow('$MAX_WORKERS: expected a number');
  });

  it('documents every flag with its default and environment variable', () => {
    const text = helpText('bin', 'does things', specs);
    expect(text).toContain('--node-name value');
    expect(text).toContain('default: 5; env: MAX_WORKERS');
    expect(text).toContain('--enable-leader-election\n');
    expect(text).toContain('default: true');
  });

  it('maps upstream --socket-file names under the host root', () => {
    expect(explicitEndpoint('', '', '/host')).toBeUndefined();
    expect(explicitEndpoint('unix:///a.sock', 'b.sock', '/host')).toBe('unix:///a.sock');
    expect(explicitEndpoint('', 'containerd/containerd.sock', '/host')).toBe('/host/var/run/containerd/containerd.sock');
    expect(explicitEndpoint('', '/run/k3s/containerd/containerd.sock', '/host')).toBe('/run/k3s/containerd/containerd.sock');
  });
});
