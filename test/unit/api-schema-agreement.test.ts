// Keeps deploy/crds/, the TypeScript types (through the fully populated examples in
// test/fixtures/api-examples.ts) and the api/ validation in agreement, with a small walker over the
// structural schemas.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadYaml } from '@kubernetes/client-node';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { Node, Pod } from '../../api/types/core.js';
import {
  CONTAINER_RECREATE_REQUEST_RESOURCE,
  CRR_FAILURE_POLICIES,
  CRR_PHASES,
  GROUP,
  IMAGE_LIST_PULL_JOB_RESOURCE,
  IMAGE_PULL_JOB_RESOURCE,
  MAX_INT32,
  MIN_INT32,
  NODE_IMAGE_RESOURCE,
  VERSION_V1ALPHA1,
  VERSION_V1BETA1,
  DEFAULT_KRUISE_NAMESPACE,
  DEFAULT_WEBHOOK_SERVICE,
  admitContainerRecreateRequestCreate,
  admitContainerRecreateRequestUpdate,
  defaultImageListPullJob,
  defaultImagePullJob,
  defaultNodeImage,
  isRfc3339,
  validateContainerRecreateRequestSpec,
  validateImageListPullJob,
  validateImagePullJob,
  validateNodeImage,
} from '../../api/index.js';
import type { ContainerRecreateRequest, ImageListPullJob, ImagePullJob, KruiseResource, NodeImage } from '../../api/index.js';
import {
  fullContainerRecreateRequest,
  fullImageListPullJob,
  fullImagePullJob,
  fullNodeImage,
  validContainerRecreateRequests,
  validImageListPullJobs,
  validImagePullJobs,
  validNodeImages,
} from '../fixtures/api-examples.js';

const crdDir = join(import.meta.dirname, '..', '..', 'deploy', 'crds');

// ---- the walker ------------------------------------------------------------------------------

interface SchemaNode {
  type?: string;
  format?: string;
  description?: string;
  enum?: unknown[];
  default?: unknown;
  required?: string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  'x-kubernetes-int-or-string'?: boolean;
  minimum?: number;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-map-type'?: string;
}

const allowedKeys = new Set([
  'type',
  'format',
  'description',
  'enum',
  'default',
  'required',
  'properties',
  'additionalProperties',
  'items',
  'anyOf',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'minimum',
  'minLength',
  'maxLength',
  'pattern',
]);
const formats: Record<string, string> = { 'date-time': 'string', int32: 'integer', int64: 'integer' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function at(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/**
 * The structural-schema rules the API server applies (every node typed, int-or-string only as
 * anyOf integer|string, no properties next to additionalProperties), plus this repository's: no
 * preserve-unknown-fields, no CEL, no key the walker does not know (a typo would be dropped).
 */
function structuralProblems(raw: unknown, path: string): string[] {
  if (!isObject(raw)) return [`${path}: schema node is not an object`];
  const problems = Object.keys(raw)
    .filter((key) => !allowedKeys.has(key))
    .map((key) => `${path}: unexpected schema key ${key}`);
  const node = raw as SchemaNode;
  if (node['x-kubernetes-int-or-string'] === true) {
    const anyOf = JSON.stringify(node.anyOf);
    if (anyOf !== JSON.stringify([{ type: 'integer' }, { type: 'string' }]) || node.type !== undefined) {
      problems.push(`${path}: int-or-string must be anyOf [integer, string] without a type`);
    }
    return problems;
  }
  if (node.anyOf !== undefined) problems.push(`${path}: anyOf is only for int-or-string`);
  if (!['object', 'array', 'string', 'integer', 'boolean'].includes(node.type ?? '')) problems.push(`${path}: missing or bad type`);
  if (node.format !== undefined && formats[node.format] !== node.type) problems.push(`${path}: format ${node.format} on ${node.type}`);
  if (node.enum !== undefined && (node.type !== 'string' || !node.enum.every((v) => typeof v === 'string'))) {
    problems.push(`${path}: enum must list strings`);
  }
  if (node.type === 'object') {
    if (node.properties !== undefined && node.additionalProperties !== undefined) {
      problems.push(`${path}: both properties and additionalProperties`);
    }
    if (node.properties === undefined && node.additionalProperties === undefined && path !== 'metadata') {
      problems.push(`${path}: object without properties`);
    }
    for (const key of node.required ?? []) {
      if (node.properties?.[key] === undefined) problems.push(`${path}: required ${key} is not a property`);
    }
    for (const [key, child] of Object.entries(node.properties ?? {})) problems.push(...structuralProblems(child, at(path, key)));
    if (node.additionalProperties !== undefined) problems.push(...structuralProblems(node.additionalProperties, `${path}.*`));
  } else if (node.properties !== undefined || node.additionalProperties !== undefined || node.required !== undefined) {
    problems.push(`${path}: object keywords on a ${node.type}`);
  }
  if (node.type === 'array') {
    if (node.items === undefined) problems.push(`${path}: array without items`);
    else problems.push(...structuralProblems(node.items, `${path}[]`));
  } else if (node.items !== undefined) {
    problems.push(`${path}: items on a ${node.type}`);
  }
  return problems;
}

/** Every field path the schema declares: "spec.images.*.tags[].tag". */
function schemaPaths(node: SchemaNode, path = '', out = new Set<string>()): Set<string> {
  if (path !== '') out.add(path);
  for (const [key, child] of Object.entries(node.properties ?? {})) schemaPaths(child, at(path, key), out);
  if (node.additionalProperties !== undefined) schemaPaths(node.additionalProperties, `${path}.*`, out);
  if (node.items !== undefined) schemaPaths(node.items, `${path}[]`, out);
  return out;
}

function walk(node: SchemaNode, fn: (node: SchemaNode, path: string) => void, path = ''): void {
  fn(node, path);
  for (const [key, child] of Object.entries(node.properties ?? {})) walk(child, fn, at(path, key));
  if (node.additionalProperties !== undefined) walk(node.additionalProperties, fn, `${path}.*`);
  if (node.items !== undefined) walk(node.items, fn, `${path}[]`);
}

interface Conformance {
  /** Schema paths the value populates. */
  visited: Set<string>;
  /** Fields the schema does not know, wrong types, missing required fields, values outside an enum. */
  problems: string[];
}

/** Checks `value` against the schema the way the API server would, recording which paths it uses. */
function conform(node: SchemaNode, value: unknown): Conformance {
  const result: Conformance = { visited: new Set(), problems: [] };
  check(node, value, '', result);
  return result;
}

function check(node: SchemaNode, value: unknown, path: string, result: Conformance): void {
  if (path !== '') result.visited.add(path);
  const problem = (detail: string): void => void result.problems.push(`${path}: ${detail}`);
  if (node['x-kubernetes-int-or-string'] === true) {
    if (!Number.isSafeInteger(value) && typeof value !== 'string') problem(`expected int-or-string, got ${JSON.stringify(value)}`);
    return;
  }
  if (node.type === 'object') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return problem('expected an object');
    // metadata: the API server validates it itself.
    if (node.properties === undefined && node.additionalProperties === undefined) return;
    const fields = value as Record<string, unknown>;
    for (const key of node.required ?? []) if (fields[key] === undefined) result.problems.push(`${at(path, key)}: required`);
    for (const [key, child] of Object.entries(fields)) {
      if (child === undefined) continue;
      const sub = node.properties !== undefined ? node.properties[key] : node.additionalProperties;
      if (sub === undefined) result.problems.push(`${at(path, key)}: not in the schema`);
      else check(sub, child, node.properties !== undefined ? at(path, key) : `${path}.*`, result);
    }
  } else if (node.type === 'array') {
    if (!Array.isArray(value)) return problem('expected an array');
    for (const item of value) check(node.items ?? {}, item, `${path}[]`, result);
  } else if (node.type === 'string') {
    if (typeof value !== 'string') return problem(`expected a string, got ${JSON.stringify(value)}`);
    if (node.enum !== undefined && !node.enum.includes(value)) {
      problem(`${JSON.stringify(value)} is not one of ${node.enum.join(', ')}`);
    }
    if (node.format === 'date-time' && !isRfc3339(value)) problem(`${JSON.stringify(value)} is not a date-time`);
  } else if (node.type === 'integer') {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) return problem(`expected an integer, got ${JSON.stringify(value)}`);
    if (node.format === 'int32' && (value > MAX_INT32 || value < MIN_INT32)) problem('out of int32 range');
  } else if (node.type === 'boolean') {
    if (typeof value !== 'boolean') problem(`expected a boolean, got ${JSON.stringify(value)}`);
  } else {
    problem(`schema node has type ${node.type}`);
  }
}

// ---- the four CRDs ---------------------------------------------------------------------------

interface LoadedCrd {
  typed: V1CustomResourceDefinition;
  /** The stored version's schema as written (v1beta1): kruise-ts's model. */
  rawSchema: unknown;
  schema: SchemaNode;
  /** Each served version's schema as written. */
  byVersion: Record<string, SchemaNode>;
}

function loadCrd(resource: KruiseResource): LoadedCrd {
  const text = readFileSync(join(crdDir, `${GROUP}_${resource.plural}.yaml`), 'utf8');
  const typed = loadYaml<V1CustomResourceDefinition>(text);
  // An unknown kind makes client-node hand back the document as parsed, with the schema's real keys.
  const raw = loadYaml<{ spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: unknown } }> } }>(
    text.replace(/^kind: CustomResourceDefinition$/m, 'kind: RawDocument'),
  );
  const byVersion = Object.fromEntries(raw.spec.versions.map((v) => [v.name, v.schema.openAPIV3Schema as SchemaNode]));
  const rawSchema = byVersion[VERSION_V1BETA1];
  return { typed, rawSchema, schema: rawSchema as SchemaNode, byVersion };
}

/** Where two schemas differ, descriptions aside: "+path" only in `b`, "-path" only in `a`, "~path" changed. */
function schemaDelta(a: unknown, b: unknown, path = ''): string[] {
  if (isObject(a) && isObject(b)) {
    const out: string[] = [];
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (key === 'description') continue;
      if (!(key in a)) out.push(`+${at(path, key)}`);
      else if (!(key in b)) out.push(`-${at(path, key)}`);
      else out.push(...schemaDelta(a[key], b[key], at(path, key)));
    }
    return out;
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [`~${path}`];
}

interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
}

const age: PrinterColumn = { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' };

interface KindCase {
  resource: KruiseResource;
  columns: PrinterColumn[];
  /** v1beta1's columns where they differ from v1alpha1's. */
  v1beta1Columns?: PrinterColumn[];
  /** v1beta1's enums (v1alpha1 declares none, as upstream). */
  enums: Record<string, readonly string[]>;
  /** How v1beta1's schema differs from v1alpha1's in upstream's CRDs (see schemaDelta). */
  v1beta1Delta: string[];
  full: object;
  valid: object[];
  /** Errors the full example has because it combines exclusive fields; empty when it is admissible. */
  fullErrors: string[];
  validate: (obj: never) => string[];
  /** Manifests as users write them for upstream OpenKruise, with what admission makes of them. */
  manifests: Array<{ yaml: string; admitted: (obj: never) => object }>;
}

const exclusiveSelectorErrors = [
  'spec.selector: names and matchLabels/matchExpressions are mutually exclusive',
  'spec.podSelector: must not be set together with spec.selector',
];

const now = new Date('2024-05-01T10:00:00Z');

const pod: Pod = {
  metadata: { name: 'pod-name', namespace: 'pod-namespace', uid: '0f8e4c2a-1d3b-4a5c-8e7f-9a0b1c2d3e4f' },
  spec: {
    nodeName: 'node-a',
    terminationGracePeriodSeconds: 30,
    containers: [
      { name: 'app', image: 'nginx:1.25', lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'sleep 5'] } } } },
      {
        name: 'sidecar',
        image: 'busybox:1.36',
        ports: [{ name: 'admin', containerPort: 9000 }],
        lifecycle: { preStop: { httpGet: { path: '/quit', port: 'admin' } } },
      },
    ],
  },
  status: {
    phase: 'Running',
    containerStatuses: [
      { name: 'app', containerID: 'containerd://aaa', restartCount: 1, ready: true, image: 'nginx:1.25', imageID: '' },
      { name: 'sidecar', containerID: 'containerd://bbb', restartCount: 0, ready: true, image: 'busybox:1.36', imageID: '' },
    ],
  },
};
const node: Node = { metadata: { name: 'node-a' } };

function admittedCrr(crr: ContainerRecreateRequest): ContainerRecreateRequest {
  const result = admitContainerRecreateRequestCreate(crr, pod, node);
  if (!result.allowed) throw new Error(result.message);
  return result.object;
}

const cases: KindCase[] = [
  {
    resource: NODE_IMAGE_RESOURCE,
    columns: [
      { name: 'DESIRED', type: 'integer', jsonPath: '.status.desired' },
      { name: 'PULLING', type: 'integer', jsonPath: '.status.pulling' },
      { name: 'SUCCEED', type: 'integer', jsonPath: '.status.succeeded' },
      { name: 'FAILED', type: 'integer', jsonPath: '.status.failed' },
      age,
    ],
    enums: {},
    v1beta1Delta: ['+properties.spec.properties.images.additionalProperties.properties.pullSecrets.items.properties.mode'],
    full: fullNodeImage,
    valid: validNodeImages,
    fullErrors: [],
    validate: (obj: NodeImage) => validateNodeImage(obj),
    manifests: [
      {
        yaml: `
apiVersion: apps.kruise.io/v1alpha1
kind: NodeImage
metadata:
  name: node-a
spec:
  images:
    nginx:
      tags:
      - tag: "1.25"
        pullPolicy:
          ttlSecondsAfterFinished: 300
`,
        admitted: (obj: NodeImage) => defaultNodeImage(obj, now),
      },
    ],
  },
  {
    resource: IMAGE_PULL_JOB_RESOURCE,
    columns: [
      { name: 'TOTAL', type: 'integer', jsonPath: '.status.desired' },
      { name: 'ACTIVE', type: 'integer', jsonPath: '.status.active' },
      { name: 'SUCCEED', type: 'integer', jsonPath: '.status.succeeded' },
      { name: 'FAILED', type: 'integer', jsonPath: '.status.failed' },
      age,
      { name: 'MESSAGE', type: 'string', jsonPath: '.status.message' },
    ],
    v1beta1Columns: [
      { name: 'TOTAL', type: 'integer', jsonPath: '.status.desired' },
      { name: 'ACTIVE', type: 'integer', jsonPath: '.status.active' },
      { name: 'SUCCEED', type: 'integer', jsonPath: '.status.succeeded' },
      { name: 'FAILED', type: 'integer', jsonPath: '.status.failed' },
      age,
    ],
    enums: {},
    v1beta1Delta: [],
    full: fullImagePullJob,
    valid: validImagePullJobs,
    fullErrors: exclusiveSelectorErrors,
    validate: (obj: ImagePullJob) => validateImagePullJob(obj),
    manifests: [
      {
        yaml: `
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: job-with-always
spec:
  image: nginx:1.9.1
  parallelism: 10
  selector:
    matchLabels:
      node-type: xxx
  completionPolicy:
    type: Always
    activeDeadlineSeconds: 1200
    ttlSecondsAfterFinished: 300
  pullPolicy:
    backoffLimit: 3
    timeoutSeconds: 300
  pullSecrets:
  - secret-name1
`,
        admitted: (obj: ImagePullJob) => defaultImagePullJob(obj, 'create'),
      },
      {
        yaml: `
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: job-with-never
spec:
  image: nginx:1.9.1
  parallelism: "2"
  podSelector:
    matchExpressions:
    - key: app
      operator: In
      values: [web]
  completionPolicy:
    type: Never
`,
        admitted: (obj: ImagePullJob) => defaultImagePullJob(obj, 'create'),
      },
      {
        yaml: `
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: minimal
spec:
  image: busybox
`,
        admitted: (obj: ImagePullJob) => defaultImagePullJob(obj, 'create'),
      },
    ],
  },
  {
    resource: IMAGE_LIST_PULL_JOB_RESOURCE,
    columns: [
      { name: 'TOTAL', type: 'integer', jsonPath: '.status.desired' },
      { name: 'SUCCEEDED', type: 'integer', jsonPath: '.status.succeeded' },
      { name: 'COMPLETED', type: 'integer', jsonPath: '.status.completed' },
      age,
    ],
    enums: {},
    v1beta1Delta: [],
    full: fullImageListPullJob,
    valid: validImageListPullJobs,
    fullErrors: exclusiveSelectorErrors,
    validate: (obj: ImageListPullJob) => validateImageListPullJob(obj),
    manifests: [
      {
        yaml: `
apiVersion: apps.kruise.io/v1alpha1
kind: ImageListPullJob
metadata:
  name: job-with-always
spec:
  images:
  - nginx:1.9.1
  - busybox:1.29.2
  parallelism: 10
  selector:
    names:
    - node-1
    - node-2
  completionPolicy:
    type: Always
    activeDeadlineSeconds: 1200
    ttlSecondsAfterFinished: 300
  pullPolicy:
    backoffLimit: 3
    timeoutSeconds: 300
`,
        admitted: (obj: ImageListPullJob) => defaultImageListPullJob(obj),
      },
    ],
  },
  {
    resource: CONTAINER_RECREATE_REQUEST_RESOURCE,
    columns: [
      { name: 'PHASE', type: 'string', jsonPath: '.status.phase' },
      { name: 'POD', type: 'string', jsonPath: '.spec.podName' },
      { name: 'NODE', type: 'string', jsonPath: '.metadata.labels.crr\\.apps\\.kruise\\.io/node-name' },
      age,
    ],
    enums: {
      'spec.strategy.failurePolicy': CRR_FAILURE_POLICIES,
      'status.phase': CRR_PHASES,
      'status.containerRecreateStates[].phase': CRR_PHASES,
      'status.conditions[].status': ['True', 'False', 'Unknown'],
    },
    v1beta1Delta: [
      '+properties.spec.properties.activeDeadlineSeconds.minimum',
      '+properties.spec.properties.strategy.properties.failurePolicy.enum',
      '+properties.spec.properties.strategy.properties.minStartedSeconds.minimum',
      '+properties.spec.properties.strategy.properties.terminationGracePeriodSeconds.minimum',
      '+properties.spec.properties.strategy.properties.unreadyGracePeriodSeconds.minimum',
      '+properties.spec.properties.ttlSecondsAfterFinished.minimum',
      '+properties.status.properties.conditions',
      '+properties.status.properties.containerRecreateStates.items.properties.phase.enum',
      '+properties.status.properties.containerStatusSnapshot',
      '+properties.status.properties.phase.enum',
    ],
    full: fullContainerRecreateRequest,
    valid: validContainerRecreateRequests,
    fullErrors: [],
    validate: (obj: ContainerRecreateRequest) => {
      const update = admitContainerRecreateRequestUpdate(obj, obj);
      return [...validateContainerRecreateRequestSpec(obj.spec), ...(update.allowed ? [] : update.errors)];
    },
    manifests: [
      {
        yaml: `
apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata:
  namespace: pod-namespace
  name: xxx
spec:
  podName: pod-name
  containers:
  - name: app
  - name: sidecar
  strategy:
    failurePolicy: Fail
    orderedRecreate: false
    terminationGracePeriodSeconds: 30
    unreadyGracePeriodSeconds: 3
    minStartedSeconds: 10
  activeDeadlineSeconds: 300
  ttlSecondsAfterFinished: 1800
`,
        admitted: (obj: ContainerRecreateRequest) => admittedCrr(obj),
      },
    ],
  },
];

describe.each(cases)('$resource.kind', (c) => {
  const crd = loadCrd(c.resource);
  const paths = schemaPaths(crd.schema);

  it('serves v1alpha1 and v1beta1 and stores v1beta1, with the upstream names, scope and status subresource', () => {
    const { typed } = crd;
    expect(typed.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(typed.metadata?.name).toBe(c.resource.crdName);
    expect(typed.spec.group).toBe(GROUP);
    expect(typed.spec.scope).toBe(c.resource.namespaced ? 'Namespaced' : 'Cluster');
    expect(typed.spec.names).toEqual({
      kind: c.resource.kind,
      listKind: c.resource.listKind,
      plural: c.resource.plural,
      singular: c.resource.singular,
      ...(c.resource.shortNames.length > 0 ? { shortNames: c.resource.shortNames } : {}),
    });
    expect(typed.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      [VERSION_V1ALPHA1, true, false],
      [VERSION_V1BETA1, true, true],
    ]);
    for (const v of typed.spec.versions) expect(v.subresources).toEqual({ status: {} });
  });

  it('converts through the webhook only where the two versions hold the same data differently (CRR)', () => {
    if (c.resource === CONTAINER_RECREATE_REQUEST_RESOURCE) {
      expect(crd.typed.spec.conversion).toEqual({
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: DEFAULT_KRUISE_NAMESPACE, name: DEFAULT_WEBHOOK_SERVICE, path: '/convert', port: 443 } } },
      });
    } else {
      expect(crd.typed.spec.conversion).toBeUndefined();
    }
  });

  it("differs between v1alpha1 and v1beta1 exactly where upstream's versions do", () => {
    expect(schemaDelta(crd.byVersion[VERSION_V1ALPHA1], crd.byVersion[VERSION_V1BETA1])).toEqual(c.v1beta1Delta);
  });

  it('has the upstream printer columns, each pointing at a declared field', () => {
    const columns = (version: string): PrinterColumn[] =>
      (crd.typed.spec.versions.find((v) => v.name === version)?.additionalPrinterColumns ?? []).map(({ name, type, jsonPath }) => ({ name, type, jsonPath }));
    expect(columns(VERSION_V1ALPHA1)).toEqual(c.columns);
    expect(columns(VERSION_V1BETA1)).toEqual(c.v1beta1Columns ?? c.columns);
    for (const { jsonPath } of c.columns) {
      if (!jsonPath.startsWith('.metadata.')) expect(paths).toContain(jsonPath.slice(1));
    }
  });

  it('has structural schemas without unknown keys, preserve-unknown-fields or CEL', () => {
    for (const schema of Object.values(crd.byVersion)) expect(structuralProblems(schema, '')).toEqual([]);
  });

  it("declares enums only where upstream's v1beta1 does, with the same values, and none in v1alpha1", () => {
    const enumsOf = (schema: SchemaNode | undefined): Record<string, unknown[]> => {
      const enums: Record<string, unknown[]> = {};
      if (schema === undefined) return enums;
      walk(schema, (n, path) => {
        if (n.enum !== undefined) enums[path] = n.enum;
      });
      return enums;
    };
    expect(enumsOf(crd.byVersion[VERSION_V1ALPHA1])).toEqual({});
    expect(enumsOf(crd.byVersion[VERSION_V1BETA1])).toEqual(Object.fromEntries(Object.entries(c.enums).map(([path, values]) => [path, [...values]])));
  });

  it('sets no schema defaults beyond upstream (only a port protocol of TCP)', () => {
    const defaults: Record<string, unknown> = {};
    walk(crd.schema, (n, path) => {
      if (n.default !== undefined) defaults[path] = n.default;
    });
    const expected = c.resource === CONTAINER_RECREATE_REQUEST_RESOURCE ? { 'spec.containers[].ports[].protocol': 'TCP' } : {};
    expect(defaults).toEqual(expected);
  });

  it('the fully populated example uses every schema field and nothing else', () => {
    const { visited, problems } = conform(crd.schema, c.full);
    expect(problems).toEqual([]);
    expect([...paths].filter((p) => !visited.has(p))).toEqual([]);
    expect([...visited].filter((p) => !paths.has(p))).toEqual([]);
  });

  it('the fully populated example fails validation only for combining exclusive fields', () => {
    expect(c.validate(c.full as never)).toEqual(c.fullErrors);
  });

  it('the admissible examples pass validation and, together, still cover every schema field', () => {
    const visited = new Set<string>();
    for (const example of c.valid) {
      expect(c.validate(example as never)).toEqual([]);
      const result = conform(crd.schema, example);
      expect(result.problems).toEqual([]);
      result.visited.forEach((p) => visited.add(p));
    }
    expect([...paths].filter((p) => !visited.has(p))).toEqual([]);
  });

  it.each(c.manifests.map((m, i) => [i, m] as const))('upstream-style manifest %i conforms once admitted', (_i, manifest) => {
    const parsed = loadYaml<object>(manifest.yaml);
    const raw = conform(crd.schema, parsed);
    expect(raw.problems.filter((p) => !p.endsWith(': required'))).toEqual([]);
    const admitted = manifest.admitted(parsed as never);
    expect(conform(crd.schema, admitted).problems).toEqual([]);
    expect(c.validate(admitted as never)).toEqual([]);
  });
});
