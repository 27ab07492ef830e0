import type { ImageTagSpec, NodeImageSpec, NodeImageStatus } from '../../api/types/nodeimage.js';
import { planPulls } from '../../daemon/imagepuller/plan.js';
import { buildStatus } from '../../daemon/imagepuller/status.js';
import { layerProgress, ingestDigest, ProgressPoller } from '../../daemon/imagepuller/progress.js';
import type { CriClient } from '../../daemon/cri/client.js';
import { usedPercent } from '../../daemon/imagepuller/diskguard.js';
import { tagKey, type TagState } from '../../daemon/imagepuller/state.js';

const t = (tag: string, version = 0, over: Partial<ImageTagSpec> = {}): ImageTagSpec => ({ tag, version, ...over });
const spec = (images: Record<string, ImageTagSpec[]>): NodeImageSpec => ({
  images: Object.fromEntries(Object.entries(images).map(([k, tags]) => [k, { tags }])),
});
const state = (image: string, tag: string, version: number, phase: TagState['phase'], over: Partial<TagState> = {}): TagState => ({
  image,
  tag,
  version,
  phase,
  progress: phase === 'Succeeded' ? 100 : 0,
  ...over,
});

describe('planPulls', () => {
  it('pulls every tag nobody has answered yet', () => {
    const p = planPulls(spec({ nginx: [t('1.0'), t('1.1')], redis: [t('7')] }), undefined, new Map(), new Map());
    expect(p.start.map((d) => `${d.image}:${d.tag}`)).toEqual(['nginx:1.0', 'nginx:1.1', 'redis:7']);
    expect(p.cancel).toEqual([]);
    expect(p.adopt).toEqual([]);
  });

  it('adopts a result recorded in the status for the same version, so a restart never pulls it again', () => {
    const status: NodeImageStatus = {
      desired: 2,
      imageStatuses: {
        nginx: { tags: [{ tag: '1.0', phase: 'Succeeded', version: 3, completionTime: '2024-01-01T00:00:00Z', imageID: 'nginx@sha256:1' }, { tag: '1.1', phase: 'Pulling', version: 0 }] },
      },
    };
    const p = planPulls(spec({ nginx: [t('1.0', 3), t('1.1')] }), status, new Map(), new Map());
    expect(p.adopt).toEqual([state('nginx', '1.0', 3, 'Succeeded', { completionTime: '2024-01-01T00:00:00Z', imageID: 'nginx@sha256:1' })]);
    // An unfinished pull restarts from scratch.
    expect(p.start.map((d) => d.tag)).toEqual(['1.1']);
  });

  it("takes another writer's final verdict for a tag it is still pulling or queueing: the pull stops, the verdict stands", () => {
    const status: NodeImageStatus = {
      desired: 2,
      imageStatuses: { big: { tags: [{ tag: '1', phase: 'Failed', version: 0, message: 'pulling exceeds the activeDeadlineSeconds' }, { tag: '2', phase: 'Waiting', version: 0 }] } },
    };
    const running = new Map([
      [tagKey('big', '1'), 0],
      [tagKey('big', '2'), 0],
    ]);
    const known = new Map([
      [tagKey('big', '1'), state('big', '1', 0, 'Waiting')],
      [tagKey('big', '2'), state('big', '2', 0, 'Waiting')],
    ]);
    const p = planPulls(spec({ big: [t('1'), t('2')] }), status, running, known);
    expect(p.cancel).toEqual([tagKey('big', '1')]);
    expect(p.adopt).toEqual([state('big', '1', 0, 'Failed', { message: 'pulling exceeds the activeDeadlineSeconds' })]);
    expect(p.start).toEqual([]);
    // What the daemon then writes keeps the verdict: no flip back to Waiting.
    const after = new Map([...known, [tagKey('big', '1'), p.adopt[0] as TagState]]);
    expect(buildStatus(spec({ big: [t('1'), t('2')] }), after, status).imageStatuses?.['big']?.tags.map((x) => x.phase)).toEqual(['Failed', 'Waiting']);
  });

  it('pulls again when the version moved past the recorded result', () => {
    const status: NodeImageStatus = { desired: 1, imageStatuses: { nginx: { tags: [{ tag: '1.0', phase: 'Succeeded', version: 1 }] } } };
    expect(planPulls(spec({ nginx: [t('1.0', 2)] }), status, new Map(), new Map()).start.map((d) => d.version)).toEqual([2]);
  });

  it('keeps a pull serving the current version, cancels one for an old version or a removed tag', () => {
    const running = new Map([
      [tagKey('nginx', '1.0'), 0],
      [tagKey('nginx', '1.1'), 0],
      [tagKey('gone', '1'), 0],
    ]);
    const p = planPulls(spec({ nginx: [t('1.0'), t('1.1', 1)] }), undefined, running, new Map());
    expect(p.cancel.sort()).toEqual([tagKey('gone', '1'), tagKey('nginx', '1.1')].sort());
    expect(p.start.map((d) => `${d.tag}@${d.version}`)).toEqual(['1.1@1']);
  });

  it('does nothing for what memory already finished', () => {
    const known = new Map([[tagKey('nginx', '1.0'), state('nginx', '1.0', 0, 'Failed', { message: 'x' })]]);
    const p = planPulls(spec({ nginx: [t('1.0')] }), undefined, new Map(), known);
    expect(p.start).toEqual([]);
    expect(p.adopt).toEqual([]);
  });
});

describe('buildStatus', () => {
  it('lists one entry per spec tag with a state for its version, sorted, with counts and no empty strings', () => {
    const states = new Map([
      [tagKey('nginx', '1.1'), state('nginx', '1.1', 0, 'Pulling', { progress: 40, startTime: 's', message: '' })],
      [tagKey('nginx', '1.0'), state('nginx', '1.0', 0, 'Succeeded', { imageID: 'nginx@sha256:1' })],
      [tagKey('redis', '7'), state('redis', '7', 0, 'Waiting')],
      [tagKey('old', '1'), state('old', '1', 0, 'Failed')],
      [tagKey('nginx', '2.0'), state('nginx', '2.0', 4, 'Succeeded')],
    ]);
    const st = buildStatus(spec({ nginx: [t('1.1'), t('1.0'), t('2.0', 5)], redis: [t('7')] }), states, { desired: 0, firstSyncStatus: { status: 'Succeeded' } });
    expect(st).toEqual({
      firstSyncStatus: { status: 'Succeeded' },
      desired: 4,
      succeeded: 1,
      failed: 0,
      pulling: 1,
      waiting: 1,
      imageStatuses: {
        nginx: {
          tags: [
            { tag: '1.0', phase: 'Succeeded', progress: 100, version: 0, imageID: 'nginx@sha256:1' },
            { tag: '1.1', phase: 'Pulling', progress: 40, version: 0, startTime: 's' },
          ],
        },
        redis: { tags: [{ tag: '7', phase: 'Waiting', progress: 0, version: 0 }] },
      },
    });
  });

  it('omits imageStatuses when nothing is known', () => {
    expect(buildStatus(undefined, new Map())).toEqual({ desired: 0, succeeded: 0, failed: 0, pulling: 0, waiting: 0 });
  });
});

describe('byte progress', () => {
  const a = 'sha256:' + 'a'.repeat(64);
  const b = 'sha256:' + 'b'.repeat(64);
  const layers = [
    { digest: a, size: 1000 },
    { digest: b, size: 3000 },
  ];
  it('counts stored layers in full and downloading ones by offset, capped at 99', () => {
    expect(layerProgress(layers, new Set(), new Map())).toBe(0);
    expect(layerProgress(layers, new Set([a]), new Map())).toBe(25);
    expect(layerProgress(layers, new Set([a]), new Map([[b, { offset: 1500, total: 3000 }]]))).toBe(62);
    expect(layerProgress(layers, new Set([a, b]), new Map())).toBe(99);
    expect(layerProgress([], new Set(), new Map())).toBe(0);
  });
  it('follows at most maxTracked pulls at once, and a released slot is free again (once)', () => {
    const poller = new ProgressPoller({} as CriClient, 1000, 2);
    const first = poller.reserve();
    expect(poller.reserve()).toBeDefined();
    expect(poller.reserve()).toBeUndefined();
    first?.();
    first?.();
    expect(poller.reserve()).toBeDefined();
    expect(poller.reserve()).toBeUndefined();
  });
  it('reads digests from containerd ingest refs', () => {
    expect(ingestDigest(`layer-${a}`)).toBe(a);
    expect(ingestDigest(`manifest-${b}`)).toBe(b);
    expect(ingestDigest('something-else')).toBeUndefined();
  });
  it('computes disk usage as df does', () => {
    expect(usedPercent({ blocks: 100, bfree: 20, bavail: 10 })).toBeCloseTo((100 * 80) / 90);
    expect(usedPercent({ blocks: 0, bfree: 0, bavail: 0 })).toBe(0);
  });
});
