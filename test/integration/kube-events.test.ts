import { EventRecorder, type EventResult, type EventSource } from '../../kube/events.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { createNamespace, deleteNamespace, eventually, restClient } from '../helpers/kube.js';

interface Ev extends KubeObject {
  reason?: string;
  message?: string;
  count?: number;
  type?: string;
  source?: { component?: string; host?: string };
  involvedObject?: { name?: string; kind?: string; uid?: string };
}
const rest = restClient();
const events = new Resource<Ev>(rest, core.events);
const cms = new Resource<KubeObject>(rest, core.configmaps);
let ns = '';
beforeAll(async () => {
  ns = await createNamespace(rest, 'events');
});
afterAll(() => deleteNamespace(rest, ns));

async function eventsFor(name: string): Promise<Ev[]> {
  return (await events.list(ns, { fieldSelector: `involvedObject.name=${name}` })).items;
}

/** A recorder and the count of each result it reported. */
function recorder(source: EventSource): { rec: EventRecorder; results: Record<EventResult, number> } {
  const results: Record<EventResult, number> = { created: 0, patched: 0, dropped: 0, failed: 0 };
  return { rec: new EventRecorder(rest, source, { onResult: (r) => results[r]++ }), results };
}

describe('EventRecorder on the real API server', () => {
  it('turns identical events into one Event with a count', async () => {
    const obj = await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dedup', namespace: ns } });
    const { rec, results } = recorder({ component: 'kruise-ts-test', host: 'node-x' });
    for (let i = 0; i < 10; i++) rec.event({ ...obj, apiVersion: 'v1', kind: 'ConfigMap' }, 'Warning', 'PullImageFailed', 'same text');
    await rec.flush();
    const evs = await eventsFor('dedup');
    expect(evs).toHaveLength(1);
    expect(evs[0]).toMatchObject({ reason: 'PullImageFailed', message: 'same text', count: 10, type: 'Warning', source: { component: 'kruise-ts-test', host: 'node-x' } });
    expect(evs[0]?.involvedObject?.uid).toBe(obj.metadata?.uid);
    expect(results).toEqual({ created: 1, patched: 9, dropped: 0, failed: 0 });
  });

  it('rate-limits a flood of different events per object to a burst of 25', async () => {
    const obj = await cms.create({ metadata: { name: 'flood', namespace: ns } });
    const { rec, results } = recorder({ component: 'kruise-ts-test' });
    for (let i = 0; i < 50; i++) rec.event({ ...obj, apiVersion: 'v1', kind: 'ConfigMap' }, 'Normal', `Reason${i}`, `message ${i}`);
    await rec.flush();
    expect(results).toEqual({ created: 25, patched: 0, dropped: 25, failed: 0 });
    expect(await eventsFor('flood')).toHaveLength(25);
  });

  it('combines more than 10 similar messages for one object and reason', async () => {
    const obj = await cms.create({ metadata: { name: 'similar', namespace: ns } });
    const { rec, results } = recorder({ component: 'kruise-ts-test' });
    for (let i = 0; i < 15; i++) rec.event({ ...obj, apiVersion: 'v1', kind: 'ConfigMap' }, 'Warning', 'Failed', `attempt ${i} failed`);
    await rec.flush();
    const evs = await eventually(async () => {
      const e = await eventsFor('similar');
      if (e.length === 0) throw new Error('none yet');
      return e;
    });
    const combined = evs.filter((e) => e.message?.startsWith('(combined from similar events)'));
    expect(evs).toHaveLength(11);
    expect(combined).toHaveLength(1);
    expect(combined[0]).toMatchObject({ count: 5, message: '(combined from similar events): attempt 14 failed' });
    expect(results).toEqual({ created: 11, patched: 4, dropped: 0, failed: 0 });
  });

  it('never throws to the caller when the API refuses the event', async () => {
    const { rec, results } = recorder({ component: 'kruise-ts-test' });
    rec.event({ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: 'no-such-namespace-zz' }, 'Normal', 'R', 'm');
    await rec.flush();
    expect(results).toEqual({ created: 0, patched: 0, dropped: 0, failed: 1 });
  });
});
