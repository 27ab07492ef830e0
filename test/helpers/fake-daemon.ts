import type { Node } from '../../api/types/core.js';
import { sortByTag } from '../../api/nodeimage.js';
import type { ImageStatus, ImageTagStatus, NodeImage, NodeImageStatus } from '../../api/types/nodeimage.js';
import { Informer } from '../../kube/informer.js';
import type { RestClient } from '../../kube/rest.js';
import { core, Resource } from '../../kube/resource.js';
import { updateWithRetry } from '../../kube/write.js';
import { kruise } from './kube.js';

/** What the fake daemon does with one tag: finish it (after a delay), or leave it Pulling. */
export type Answer = { phase: 'Succeeded' | 'Failed'; afterMs?: number; message?: string } | { phase: 'Pulling' };
export type Behaviour = (node: string, image: string, tag: string, version: number) => Answer;

const FAKE_DAEMON_LABEL = 'kruise-ts.test/fake-daemon';

/**
 * Stands in for kruise-daemon on nodes that have none (NodeImages labelled FAKE_DAEMON_LABEL=<id>):
 * answers every tag of the spec through the status subresource the way the daemon does, a whole
 * status rebuilt from what it knows, by tag and version.
 */
export class FakeDaemon {
  private readonly informer: Informer<NodeImage>;
  private readonly answered = new Map<string, ImageTagStatus>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopper = new AbortController();
  private readonly api: Resource<NodeImage>;
  behaviour: Behaviour;

  constructor(rest: RestClient, readonly id: string, behaviour: Behaviour = () => ({ phase: 'Succeeded' })) {
    this.behaviour = behaviour;
    this.api = new Resource<NodeImage>(rest, kruise.nodeImages);
    this.informer = new Informer<NodeImage>(this.api, { labelSelector: `${FAKE_DAEMON_LABEL}=${id}` });
    this.informer.on({ add: (ni) => this.plan(ni), update: (_a, ni) => this.plan(ni) });
    void this.informer.run(this.stopper.signal);
  }

  get labels(): Record<string, string> {
    return { [FAKE_DAEMON_LABEL]: this.id };
  }

  synced(): Promise<void> {
    return this.informer.synced;
  }

  stop(): void {
    this.stopper.abort();
    for (const t of this.timers) clearTimeout(t);
  }

  /** Finishes what the daemon holds Pulling for image:tag on `node` (the tag's current version). */
  async complete(node: string, image: string, tag: string, phase: 'Succeeded' | 'Failed' = 'Succeeded'): Promise<void> {
    const ni = this.informer.get(node);
    const t = ni?.spec?.images?.[image]?.tags.find((x) => x.tag === tag);
    if (!t) throw new Error(`${node} holds no ${image}:${tag}`);
    const key = `${node}\u0000${image}\u0000${tag}\u0000${t.version ?? 0}`;
    const started = this.answered.get(key)?.startTime;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    this.answered.set(key, { tag, phase, version: t.version ?? 0, progress: phase === 'Succeeded' ? 100 : 0, ...(started ? { startTime: started } : {}), completionTime: now });
    await this.write(node);
  }

  private plan(ni: NodeImage): void {
    const node = ni.metadata?.name ?? '';
    for (const [image, spec] of Object.entries(ni.spec?.images ?? {})) {
      for (const t of spec.tags ?? []) {
        const version = t.version ?? 0;
        const key = `${node}\u0000${image}\u0000${t.tag}\u0000${version}`;
        if (this.answered.has(key)) continue;
        const answer = this.behaviour(node, image, t.tag, version);
        const started = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
        this.answered.set(key, { tag: t.tag, phase: 'Pulling', version, progress: 0, startTime: started });
        if (answer.phase === 'Pulling') {
          void this.write(node);
          continue;
        }
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.answered.set(key, {
            tag: t.tag,
            phase: answer.phase,
            version,
            progress: answer.phase === 'Succeeded' ? 100 : 0,
            startTime: started,
            completionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
            ...(answer.message ? { message: answer.message } : {}),
          });
          void this.write(node);
        }, answer.afterMs ?? 0);
        this.timers.add(timer);
      }
    }
  }

  private build(ni: NodeImage): NodeImageStatus {
    const node = ni.metadata?.name ?? '';
    const images: Record<string, ImageStatus> = {};
    const counts = { succeeded: 0, failed: 0, pulling: 0, waiting: 0 };
    let desired = 0;
    for (const [image, spec] of Object.entries(ni.spec?.images ?? {})) {
      for (const t of spec.tags ?? []) {
        desired++;
        const s = this.answered.get(`${node}\u0000${image}\u0000${t.tag}\u0000${t.version ?? 0}`);
        if (!s) continue;
        (images[image] ??= { tags: [] }).tags.push(s);
        if (s.phase === 'Succeeded') counts.succeeded++;
        else if (s.phase === 'Failed') counts.failed++;
        else counts.pulling++;
      }
    }
    for (const i of Object.values(images)) i.tags = sortByTag(i.tags);
    return { desired, ...counts, ...(Object.keys(images).length > 0 ? { imageStatuses: images } : {}) };
  }

  private async write(node: string): Promise<void> {
    if (this.stopper.signal.aborted) return;
    await updateWithRetry(
      this.api,
      undefined,
      node,
      (fresh) => {
        const status = this.build(fresh);
        return JSON.stringify(status) === JSON.stringify(fresh.status) ? undefined : { ...fresh, status };
      },
      { status: true, attempts: 20 },
    ).catch(() => undefined);
  }
}

/** A NodeImage with no Node (kept by the fake-nodeimage label), answered by `daemon`. */
export async function createFakeNodeImage(rest: RestClient, name: string, daemon: FakeDaemon, labels: Record<string, string> = {}): Promise<void> {
  await new Resource<NodeImage>(rest, kruise.nodeImages).create({
    metadata: { name, labels: { 'apps.kruise.io/fake-nodeimage': 'true', ...daemon.labels, ...labels } },
    spec: {},
  });
}


/**
 * A Node object without a kubelet, Ready since `readySinceMs` ago (or not Ready), unschedulable so
 * nothing lands on it. The NodeImage controller treats it like any node.
 */
export async function createFakeNode(rest: RestClient, name: string, labels: Record<string, string>, ready = true, readySinceMs = 60_000): Promise<void> {
  const nodes = new Resource<Node>(rest, core.nodes);
  const created = await nodes.create({ metadata: { name, labels }, spec: { unschedulable: true } });
  const now = new Date();
  const since = new Date(now.getTime() - readySinceMs);
  const condition = { type: 'Ready', status: ready ? 'True' : 'False', reason: 'FakeNode', message: 'a test node without kubelet', lastHeartbeatTime: now.toISOString(), lastTransitionTime: since.toISOString() };
  // The node lifecycle controller touches new nodes too: write the condition on the fresh object.
  await updateWithRetry(nodes, undefined, name, (fresh) => ({ ...fresh, status: { ...fresh.status, conditions: [condition] } }), { status: true, initial: created });
}
