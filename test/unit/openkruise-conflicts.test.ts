import { openKruiseConflicts, type DeploymentView } from '../../manager/openkruise/conflicts.js';

const manager = (args: string[], replicas = 2): DeploymentView => ({ metadata: { name: 'kruise-controller-manager' }, spec: { replicas, template: { spec: { containers: [{ args }] } } } });
const hook = (name: string, resources: string[]) => ({ name, rules: [{ apiGroups: ['apps.kruise.io'], resources }] });
const none = { namespace: 'kruise-system', daemonSet: undefined, manager: undefined, webhookConfigurations: [] };

describe('what of OpenKruise runs against kruise-ts', () => {
  it('nothing when it is absent, or installed with KruiseDaemon=false and without those webhooks', () => {
    expect(openKruiseConflicts(none)).toEqual([]);
    expect(openKruiseConflicts({ ...none, manager: manager(['--feature-gates=ImagePullJobGate=true,KruiseDaemon=false']) })).toEqual([]);
    expect(openKruiseConflicts({ ...none, daemonSet: { status: { desiredNumberScheduled: 0 } }, webhookConfigurations: [{ metadata: { name: 'kruise-mutating-webhook-configuration' }, webhooks: [hook('mcloneset.kb.io', ['clonesets'])] }] })).toEqual([]);
  });

  it('its daemon on any node, and its manager with KruiseDaemon on (the default), make the controllers stand back', () => {
    const daemon = openKruiseConflicts({ ...none, daemonSet: { status: { desiredNumberScheduled: 3 } } });
    expect(daemon).toEqual([{ blocking: true, message: expect.stringContaining('kruise-system/kruise-daemon runs on 3 node(s)') }]);
    for (const args of [[], ['--feature-gates=ImagePullJobGate=true'], ['--feature-gates=KruiseDaemon=true']]) {
      expect(openKruiseConflicts({ ...none, manager: manager(args) })).toEqual([{ blocking: true, message: expect.stringContaining('feature gate KruiseDaemon is on') }]);
    }
    expect(openKruiseConflicts({ ...none, manager: manager([], 0) })).toEqual([]);
  });

  it('its webhooks for these kinds are reported, without stopping anything', () => {
    const c = openKruiseConflicts({
      ...none,
      webhookConfigurations: [{ metadata: { name: 'kruise-validating-webhook-configuration' }, webhooks: [hook('vnodeimage.kb.io', ['nodeimages']), hook('vcloneset.kb.io', ['clonesets'])] }],
    });
    expect(c).toEqual([{ blocking: false, message: expect.stringMatching(/kruise-validating-webhook-configuration still has vnodeimage\.kb\.io,.*handover\.sh/) }]);
  });
});
