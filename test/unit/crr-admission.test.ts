import type { Node, Pod } from '../../api/types/core.js';
import {
  ANNOTATION_CRR_UNREADY_ACQUIRED,
  API_VERSION_V1ALPHA1,
  KIND_CONTAINER_RECREATE_REQUEST,
  LABEL_CRR_ACTIVE,
  LABEL_CRR_NODE_NAME,
  LABEL_CRR_POD_UID,
  admitContainerRecreateRequestCreate,
  admitContainerRecreateRequestUpdate,
} from '../../api/index.js';
import type { AdmissionResult, ContainerRecreateRequest } from '../../api/index.js';

const podUid = '0f8e4c2a-1d3b-4a5c-8e7f-9a0b1c2d3e4f';

function makePod(): Pod {
  return {
    metadata: { name: 'web-0', namespace: 'default', uid: podUid },
    spec: {
      nodeName: 'node-a',
      terminationGracePeriodSeconds: 45,
      containers: [
        {
          name: 'app',
          image: 'nginx:1.25',
          ports: [{ name: 'http', containerPort: 8080 }],
          lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'nginx -s quit'] } } },
        },
        {
          name: 'sidecar',
          image: 'envoy:1.30',
          ports: [{ name: 'admin', containerPort: 9901, protocol: 'TCP' }],
          lifecycle: { preStop: { httpGet: { path: '/drain', port: 'admin' } } },
        },
        { name: 'logger', image: 'busybox:1.36', lifecycle: { preStop: { tcpSocket: { port: 514 } } } },
        { name: 'plain', image: 'busybox:1.36', ports: [{ containerPort: 80 }] },
        { name: 'sleeper', image: 'busybox:1.36', lifecycle: { preStop: { sleep: { seconds: 5 } } } },
      ],
    },
    status: {
      phase: 'Running',
      containerStatuses: ['app', 'sidecar', 'logger', 'plain', 'sleeper'].map((name, i) => ({
        name,
        containerID: `containerd://${name}-id`,
        restartCount: i,
        ready: true,
        image: '',
        imageID: '',
      })),
    },
  };
}

function makeNode(labels: Record<string, string> = {}): Node {
  return { metadata: { name: 'node-a', labels } };
}

function makeCrr(...containers: string[]): ContainerRecreateRequest {
  return {
    apiVersion: API_VERSION_V1ALPHA1,
    kind: KIND_CONTAINER_RECREATE_REQUEST,
    metadata: { name: 'restart', namespace: 'default', labels: { owner: 'me' } },
    spec: { podName: 'web-0', containers: containers.map((name) => ({ name })) },
  };
}

function admitted(result: AdmissionResult<ContainerRecreateRequest>): ContainerRecreateRequest {
  if (!result.allowed) throw new Error(`rejected: ${result.message}`);
  return result.object;
}

function rejected(result: AdmissionResult<ContainerRecreateRequest>): { code: number; errors: readonly string[] } {
  if (result.allowed) throw new Error('admitted');
  return { code: result.code, errors: result.errors };
}

function variant<T>(base: T, change: (copy: T) => void): T {
  const copy = structuredClone(base);
  change(copy);
  return copy;
}

describe('CRR admission on create', () => {
  it('binds the request to the pod, its node and its current containers', () => {
    const request = makeCrr('app', 'sidecar');
    const before = structuredClone(request);
    const crr = admitted(admitContainerRecreateRequestCreate(request, makePod(), makeNode()));
    expect(crr).toEqual({
      ...request,
      metadata: {
        ...request.metadata,
        labels: { owner: 'me', [LABEL_CRR_ACTIVE]: 'true', [LABEL_CRR_NODE_NAME]: 'node-a', [LABEL_CRR_POD_UID]: podUid },
      },
      spec: {
        podName: 'web-0',
        strategy: { failurePolicy: 'Fail', terminationGracePeriodSeconds: 45 },
        containers: [
          {
            name: 'app',
            preStop: { exec: { command: ['/bin/sh', '-c', 'nginx -s quit'] } },
            statusContext: { containerID: 'containerd://app-id', restartCount: 0 },
          },
          {
            name: 'sidecar',
            preStop: { httpGet: { path: '/drain', port: 'admin' } },
            ports: [{ name: 'admin', containerPort: 9901, protocol: 'TCP' }],
            statusContext: { containerID: 'containerd://sidecar-id', restartCount: 1 },
          },
        ],
      },
    });
    expect(request).toEqual(before);
  });

  const containerSnapshots: Array<[string, object]> = [
    ['a tcpSocket hook, without ports', { name: 'logger', preStop: { tcpSocket: { port: 514 } } }],
    ['no hook, without ports', { name: 'plain' }],
    ['a sleep hook, dropped', { name: 'sleeper' }],
  ];
  it.each(containerSnapshots)('copies %s', (_name, expected) => {
    const crr = admitted(admitContainerRecreateRequestCreate(makeCrr((expected as { name: string }).name), makePod(), makeNode()));
    const [container] = crr.spec.containers;
    const { statusContext: _statusContext, ...rest } = container ?? { statusContext: undefined };
    expect(rest).toEqual(expected);
  });

  it('copies no ports for an httpGet hook when the container declares none', () => {
    const pod = variant(makePod(), (p) => delete p.spec?.containers[1]?.ports);
    const [container] = admitted(admitContainerRecreateRequestCreate(makeCrr('sidecar'), pod, makeNode())).spec.containers;
    expect(container?.ports).toBeUndefined();
    expect(container?.preStop).toEqual({ httpGet: { path: '/drain', port: 'admin' } });
  });

  it('copies the virtual-kubelet label from the node', () => {
    const crr = admitted(admitContainerRecreateRequestCreate(makeCrr('app'), makePod(), makeNode({ type: 'virtual-kubelet' })));
    expect(crr.metadata?.labels?.type).toBe('virtual-kubelet');
    const other = admitted(admitContainerRecreateRequestCreate(makeCrr('app'), makePod(), makeNode({ type: 'edge' })));
    expect(other.metadata?.labels).not.toHaveProperty('type');
  });

  it('keeps a given strategy and overrides user-set binding labels', () => {
    const request = variant(makeCrr('app'), (c) => {
      c.spec.strategy = { failurePolicy: 'Ignore', terminationGracePeriodSeconds: 0, orderedRecreate: true };
      c.metadata = { ...c.metadata, labels: { [LABEL_CRR_NODE_NAME]: 'elsewhere', [LABEL_CRR_ACTIVE]: 'false' } };
    });
    const crr = admitted(admitContainerRecreateRequestCreate(request, makePod(), makeNode()));
    expect(crr.spec.strategy).toEqual({ failurePolicy: 'Ignore', terminationGracePeriodSeconds: 0, orderedRecreate: true });
    expect(crr.metadata?.labels).toEqual({ [LABEL_CRR_NODE_NAME]: 'node-a', [LABEL_CRR_ACTIVE]: 'true', [LABEL_CRR_POD_UID]: podUid });
  });

  it('leaves the grace period unset when the pod has none', () => {
    const pod = variant(makePod(), (p) => delete p.spec?.terminationGracePeriodSeconds);
    const crr = admitted(admitContainerRecreateRequestCreate(makeCrr('app'), pod, makeNode()));
    expect(crr.spec.strategy).toEqual({ failurePolicy: 'Fail' });
  });

  it('admits a pod that finished but was stopped by the sidecar terminator', () => {
    const pod = variant(makePod(), (p) => {
      if (p.status === undefined) return;
      p.status.phase = 'Succeeded';
      p.status.conditions = [{ type: 'SidecarTerminated', status: 'True' }];
    });
    expect(admitContainerRecreateRequestCreate(makeCrr('app'), pod, makeNode()).allowed).toBe(true);
  });

  it('admits the smallest allowed deadline', () => {
    const crr = variant(makeCrr('app'), (c) => (c.spec.activeDeadlineSeconds = 3));
    expect(admitContainerRecreateRequestCreate(crr, makePod(), makeNode()).allowed).toBe(true);
  });

  const invalidRequests: Array<[string, (crr: ContainerRecreateRequest) => void, string[]]> = [
    ['an empty podName', (c) => (c.spec.podName = ''), ['spec.podName: must not be empty']],
    ['no containers', (c) => (c.spec.containers = []), ['spec.containers: must not be empty']],
    ['a container without name', (c) => c.spec.containers.push({ name: '' }), ['spec.containers[1].name: must not be empty']],
    ['a container twice', (c) => c.spec.containers.push({ name: 'app' }), ['spec.containers[1].name: duplicate container "app"']],
    ['a deadline under 3s', (c) => (c.spec.activeDeadlineSeconds = 2), ['spec.activeDeadlineSeconds: must be >= 3, got 2']],
    ['a negative TTL', (c) => (c.spec.ttlSecondsAfterFinished = -5), ['spec.ttlSecondsAfterFinished: must be >= 0, got -5']],
    [
      'negative grace periods and start time',
      (c) => (c.spec.strategy = { terminationGracePeriodSeconds: -1, unreadyGracePeriodSeconds: -2, minStartedSeconds: -3 }),
      [
        'spec.strategy.terminationGracePeriodSeconds: must be >= 0, got -1',
        'spec.strategy.unreadyGracePeriodSeconds: must be >= 0, got -2',
        'spec.strategy.minStartedSeconds: must be >= 0, got -3',
      ],
    ],
    [
      'an unknown failure policy',
      (c) => (c.spec.strategy = { failurePolicy: 'Retry' as never }),
      ['spec.strategy.failurePolicy: unsupported value "Retry" (must be one of Fail, Ignore)'],
    ],
    [
      'user-supplied snapshot fields',
      (c) => (c.spec.containers[0] = { name: 'app', preStop: {}, ports: [], statusContext: { containerID: 'x', restartCount: 0 } }),
      [
        'spec.containers[0].preStop: must not be set: it is copied from the pod',
        'spec.containers[0].ports: must not be set: it is copied from the pod',
        'spec.containers[0].statusContext: must not be set: it is copied from the pod',
      ],
    ],
    [
      'several problems at once',
      (c) => {
        c.spec.podName = '';
        c.spec.activeDeadlineSeconds = 1;
      },
      ['spec.podName: must not be empty', 'spec.activeDeadlineSeconds: must be >= 3, got 1'],
    ],
  ];
  it.each(invalidRequests)('rejects %s with 400, before looking at the pod', (_name, change, errors) => {
    expect(rejected(admitContainerRecreateRequestCreate(variant(makeCrr('app'), change), undefined, undefined))).toEqual({
      code: 400,
      errors,
    });
  });

  it('rejects a request without spec', () => {
    const { spec: _spec, ...request } = makeCrr('app');
    const result = admitContainerRecreateRequestCreate(request as ContainerRecreateRequest, makePod(), makeNode());
    expect(rejected(result)).toEqual({ code: 400, errors: ['spec: required'] });
  });

  const badPods: Array<[string, Pod | undefined, Node | undefined, string[]]> = [
    ['a missing pod', undefined, makeNode(), ['spec.podName: pod "web-0" not found in namespace "default"']],
    [
      'a succeeded pod',
      variant(makePod(), (p) => p.status && (p.status.phase = 'Succeeded')),
      makeNode(),
      ['spec.podName: pod "web-0" is not active (phase Succeeded)'],
    ],
    [
      'a failed pod',
      variant(makePod(), (p) => p.status && (p.status.phase = 'Failed')),
      makeNode(),
      ['spec.podName: pod "web-0" is not active (phase Failed)'],
    ],
    [
      'a pod being deleted',
      variant(makePod(), (p) => p.metadata && (p.metadata.deletionTimestamp = new Date('2024-05-01T10:00:00Z').toISOString())),
      makeNode(),
      ['spec.podName: pod "web-0" is being deleted'],
    ],
    [
      'an unscheduled pod',
      variant(makePod(), (p) => delete p.spec?.nodeName),
      undefined,
      ['spec.podName: pod "web-0" is not scheduled to a node yet'],
    ],
    [
      'a pod without uid',
      variant(makePod(), (p) => delete p.metadata?.uid),
      makeNode(),
      ['spec.podName: pod "web-0" has no metadata.uid'],
    ],
    ['a missing node', makePod(), undefined, ['spec.podName: node "node-a" of pod "web-0" not found']],
  ];
  it.each(badPods)('rejects %s with 400', (_name, pod, node, errors) => {
    expect(rejected(admitContainerRecreateRequestCreate(makeCrr('app'), pod, node))).toEqual({ code: 400, errors });
  });

  const badContainers: Array<[string, (pod: Pod) => void, string[]]> = [
    ['a container the pod lacks', () => undefined, ['spec.containers[1].name: container "db" not found in pod "web-0"']],
    [
      'a container without status',
      (p) => p.status?.containerStatuses?.shift(),
      [
        'spec.containers[0].name: container "app" has no status in pod "web-0"',
        'spec.containers[1].name: container "db" not found in pod "web-0"',
      ],
    ],
    [
      'a container not started yet',
      (p) => {
        const status = p.status?.containerStatuses?.[0];
        if (status !== undefined) status.containerID = '';
      },
      [
        'spec.containers[0].name: container "app" of pod "web-0" has no containerID yet (not started)',
        'spec.containers[1].name: container "db" not found in pod "web-0"',
      ],
    ],
  ];
  it.each(badContainers)('rejects %s with 400', (_name, change, errors) => {
    expect(rejected(admitContainerRecreateRequestCreate(makeCrr('app', 'db'), variant(makePod(), change), makeNode()))).toEqual({
      code: 400,
      errors,
    });
  });
});

describe('CRR admission on update', () => {
  const stored = admitted(admitContainerRecreateRequestCreate(makeCrr('app', 'sidecar'), makePod(), makeNode()));
  const acquired = variant(stored, (c) => {
    c.metadata = { ...c.metadata, annotations: { [ANNOTATION_CRR_UNREADY_ACQUIRED]: '2024-05-01T10:00:00Z' } };
  });
  const labels = (c: ContainerRecreateRequest): Record<string, string> => {
    c.metadata = { ...c.metadata, labels: { ...c.metadata?.labels } };
    return c.metadata.labels ?? {};
  };

  const allowed: Array<[string, ContainerRecreateRequest, (crr: ContainerRecreateRequest) => void]> = [
    ['no change', stored, () => undefined],
    ['a status change', stored, (c) => (c.status = { phase: 'Recreating' })],
    ['the active label removed (completion)', stored, (c) => delete labels(c)[LABEL_CRR_ACTIVE]],
    ['another label added', stored, (c) => (labels(c).team = 'web')],
    ['finalizers changed', stored, (c) => (c.metadata = { ...c.metadata, finalizers: ['crr.apps.kruise.io/unready-acquired'] })],
    [
      'the unready-acquired annotation set for the first time',
      stored,
      (c) => (c.metadata = { ...c.metadata, annotations: { [ANNOTATION_CRR_UNREADY_ACQUIRED]: '2024-05-01T10:00:00Z' } }),
    ],
    ['a spec field changed from absent to null', stored, (c) => c.spec.strategy && (c.spec.strategy.minStartedSeconds = null as never)],
    [
      'other annotations changed once acquired',
      acquired,
      (c) => (c.metadata = { ...c.metadata, annotations: { ...c.metadata?.annotations, a: 'b' } }),
    ],
  ];
  it.each(allowed)('allows %s, unchanged', (_name, old, change) => {
    const crr = variant(old, change);
    expect(admitContainerRecreateRequestUpdate(crr, old)).toEqual({ allowed: true, object: crr });
  });

  const forbidden: Array<[string, ContainerRecreateRequest, (crr: ContainerRecreateRequest) => void, string[]]> = [
    ['a spec change', stored, (c) => c.spec.containers.pop(), ['spec: field is immutable']],
    ['a strategy change', stored, (c) => (c.spec.strategy = { failurePolicy: 'Ignore' }), ['spec: field is immutable']],
    [
      'a pod-uid change',
      stored,
      (c) => (labels(c)[LABEL_CRR_POD_UID] = 'other'),
      [`metadata.labels[${LABEL_CRR_POD_UID}]: field is immutable`],
    ],
    [
      'the node-name label removed',
      stored,
      (c) => delete labels(c)[LABEL_CRR_NODE_NAME],
      [`metadata.labels[${LABEL_CRR_NODE_NAME}]: field is immutable`],
    ],
    [
      'the unready-acquired annotation changed',
      acquired,
      (c) => (c.metadata = { ...c.metadata, annotations: { [ANNOTATION_CRR_UNREADY_ACQUIRED]: '2024-05-01T11:00:00Z' } }),
      [`metadata.annotations[${ANNOTATION_CRR_UNREADY_ACQUIRED}]: field is immutable once set`],
    ],
    [
      'the unready-acquired annotation removed',
      acquired,
      (c) => (c.metadata = { ...c.metadata, annotations: {} }),
      [`metadata.annotations[${ANNOTATION_CRR_UNREADY_ACQUIRED}]: field is immutable once set`],
    ],
    [
      'everything at once',
      acquired,
      (c) => {
        c.spec.podName = 'web-1';
        labels(c)[LABEL_CRR_POD_UID] = 'other';
        labels(c)[LABEL_CRR_NODE_NAME] = 'node-b';
        c.metadata = { ...c.metadata, annotations: {} };
      },
      [
        'spec: field is immutable',
        `metadata.labels[${LABEL_CRR_POD_UID}]: field is immutable`,
        `metadata.labels[${LABEL_CRR_NODE_NAME}]: field is immutable`,
        `metadata.annotations[${ANNOTATION_CRR_UNREADY_ACQUIRED}]: field is immutable once set`,
      ],
    ],
  ];
  it.each(forbidden)('forbids %s with 403', (_name, old, change, errors) => {
    expect(rejected(admitContainerRecreateRequestUpdate(variant(old, change), old))).toEqual({ code: 403, errors });
  });
});
