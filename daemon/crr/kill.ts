// Killing one container for a CRR with the kubelet's semantics: the Killing event, the preStop hook
// within the grace period, then StopContainer with what is left of it (never under 2 s).
import { EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, killingEventMessage, REASON_FAILED_PRE_STOP_HOOK, REASON_KILLING } from '../../api/events.js';
import { MIN_CRR_STOP_GRACE_SECONDS } from '../../api/limits.js';
import type { EventRecorder, EventTarget } from '../../kube/events.js';
import type { Logger } from '../../kube/log.js';
import type { CriClient } from '../cri/client.js';
import { CriError } from '../cri/errors.js';
import { runPreStop } from './prestop.js';
import type { KillTarget } from './step.js';

export interface PodRef {
  name: string;
  namespace: string;
  uid: string;
}

export interface KillDeps {
  cri: CriClient;
  events: EventRecorder;
  pod: PodRef;
  crrName: string;
  podAddress: () => Promise<string>;
  log: Logger;
  /** When this daemon first saw the CRR: the stop's log line says how long ago that was. */
  seenAtMs?: number | undefined;
  /** Called right before StopContainer, with how long the preStop hook took. */
  beforeStop?: (preStopMs: number) => void;
  signal?: AbortSignal | undefined;
}

function containerEventTarget(pod: PodRef, container: string): EventTarget {
  return { apiVersion: 'v1', kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid, fieldPath: `spec.containers{${container}}` };
}

/** Resolves to undefined once the container is stopped, or to why it could not be stopped. */
export async function killContainer(t: KillTarget, d: KillDeps): Promise<string | undefined> {
  const target = containerEventTarget(d.pod, t.name);
  d.events.event(target, EVENT_TYPE_NORMAL, REASON_KILLING, killingEventMessage(t.name, d.crrName));
  let grace = Math.max(0, t.graceSeconds);
  let preStopMs = 0;
  const hook = t.container.preStop;
  if (hook !== undefined && grace > 0) {
    const t0 = Date.now();
    const failure = await runPreStop(hook, {
      cri: d.cri,
      containerId: t.containerId,
      containerName: t.name,
      ports: t.container.ports ?? [],
      pod: d.pod,
      podAddress: d.podAddress,
      timeoutMs: grace * 1000,
      signal: d.signal,
    });
    preStopMs = Date.now() - t0;
    grace -= Math.floor(preStopMs / 1000);
    if (failure !== undefined) {
      d.log.warn('preStop hook failed', { container: t.name, error: failure });
      d.events.event(target, EVENT_TYPE_WARNING, REASON_FAILED_PRE_STOP_HOOK, failure);
    }
  }
  grace = Math.max(grace, MIN_CRR_STOP_GRACE_SECONDS);
  if (d.signal?.aborted) return 'the daemon is stopping';
  d.beforeStop?.(preStopMs);
  d.log.info('stopping container', { container: t.name, containerId: t.containerId, graceSeconds: grace, sinceSeenMs: d.seenAtMs === undefined ? undefined : Date.now() - d.seenAtMs });
  const stop = (): Promise<void> => d.cri.stopContainer(t.containerId, grace, d.signal ? { signal: d.signal } : {});
  try {
    await stop();
    return undefined;
  } catch (err) {
    if (gone(err, t, d)) return undefined;
    // containerd answers a stop whose task exited during it with its shim's error ("failed to kill
    // container ...: ttrpc: closed", about one stop in 150 in a burst of CRRs here) before it has
    // recorded the exit, and the next stop of that instance with success; the kubelet, too, tries a
    // failed kill again. An error of the runtime's own (not a deadline, the runtime being away or
    // the daemon stopping) gets one more stop of the same instance.
    if (!(err instanceof CriError && err.kind === 'other') || d.signal?.aborted) return (err as Error).message;
    d.log.info('stopping container again', { container: t.name, containerId: t.containerId, error: err.message });
    try {
      await stop();
      return undefined;
    } catch (again) {
      return gone(again, t, d) ? undefined : (again as Error).message;
    }
  }
}

/**
 * The runtime removed this instance since it was listed (it had exited): it is not running, which
 * is what the stop was for, and the kubelet brings the container back; counting it as a failed stop
 * would fail a CRR under failurePolicy Fail for a container that is recreated.
 */
function gone(err: unknown, t: KillTarget, d: KillDeps): boolean {
  if (!(err instanceof CriError && err.kind === 'not-found')) return false;
  d.log.info('container already gone', { container: t.name, containerId: t.containerId });
  return true;
}
