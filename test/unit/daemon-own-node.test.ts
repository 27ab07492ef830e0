import { callerNode, CLAIM_NODE_NAME, CLAIM_POD_NAME, CLAIM_POD_UID, ownNodeRefusal } from '../../api/daemon-own-node.js';

describe("a daemon writes only its own node's objects (the webhook's rule)", () => {
  it("reads the node from the token's claims: the node claim (1.30+), else the bound pod, else unbound", () => {
    expect(callerNode({ extra: { [CLAIM_NODE_NAME]: ['node-1'], [CLAIM_POD_NAME]: ['p'], [CLAIM_POD_UID]: ['u'] } }, 'kts')).toEqual({ node: 'node-1' });
    expect(callerNode({ extra: { [CLAIM_POD_NAME]: ['p'], [CLAIM_POD_UID]: ['u'] } }, 'kts')).toEqual({ pod: { namespace: 'kts', name: 'p', uid: 'u' } });
    expect(callerNode({ extra: { [CLAIM_POD_NAME]: ['p'] } }, 'kts')).toEqual({ unbound: true });
    expect(callerNode({ username: 'system:serviceaccount:kts:kruise-ts-daemon' }, 'kts')).toEqual({ unbound: true });
  });

  it("allows status updates of its node's NodeImage and of CRRs labelled with its node, nothing else", () => {
    const ni = { resource: 'nodeimages', subResource: 'status', operation: 'UPDATE' };
    expect(ownNodeRefusal({ ...ni, name: 'node-1' }, 'node-1')).toBeUndefined();
    expect(ownNodeRefusal({ ...ni, name: 'node-2' }, 'node-1')).toBe('kruise-daemon on node-1 may not write the NodeImage of node-2');
    expect(ownNodeRefusal({ resource: 'nodeimages', operation: 'UPDATE', name: 'node-1' }, 'node-1')).toBe('kruise-daemon may only update status');
    const crr = { resource: 'containerrecreaterequests', subResource: 'status', operation: 'UPDATE', name: 'r' };
    expect(ownNodeRefusal({ ...crr, oldLabels: { 'crr.apps.kruise.io/node-name': 'node-1' } }, 'node-1')).toBeUndefined();
    expect(ownNodeRefusal({ ...crr, oldLabels: { 'crr.apps.kruise.io/node-name': 'node-2' } }, 'node-1')).toBe('kruise-daemon on node-1 may not write ContainerRecreateRequest r of node node-2');
    expect(ownNodeRefusal(crr, 'node-1')).toBe('kruise-daemon on node-1 may not write ContainerRecreateRequest r of node (none)');
  });
});
