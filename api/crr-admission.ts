// ContainerRecreateRequest admission (upstream has only a mutating webhook). Create: validate the
// request, then bind it to the pod: labels the daemon selects on, the pod's grace period and a
// snapshot of each container's preStop hook, ports and current instance. Update: the binding and the
// spec are frozen.
import type { Container, Node, Pod } from './types/core.js';
import { admit, reject } from './admission.js';
import type { AdmissionResult } from './admission.js';
import { CRR_FAILURE_POLICIES, CRR_FAILURE_POLICY_FAIL, isOneOf } from './enums.js';
import { jsonEqual } from './json-equal.js';
import { MIN_CRR_ACTIVE_DEADLINE_SECONDS } from './limits.js';
import {
  ANNOTATION_CRR_UNREADY_ACQUIRED,
  CONDITION_SIDECAR_TERMINATED,
  LABEL_CRR_ACTIVE,
  LABEL_CRR_ACTIVE_VALUE,
  LABEL_CRR_NODE_NAME,
  LABEL_CRR_POD_UID,
  LABEL_VIRTUAL_KUBELET_KEY,
  LABEL_VIRTUAL_KUBELET_VALUE,
} from './metadata-keys.js';
import type {
  ContainerRecreateRequest,
  ContainerRecreateRequestContainer,
  ContainerRecreateRequestSpec,
  ProbeHandler,
} from './types/containerrecreaterequest.js';
import { child, fieldError, index, isEmpty, isSet, notSupported } from './validation/field-path.js';
import { checkInteger } from './validation/numbers.js';

/** Rules on the spec alone, which hold for a stored CRR as well as for a request. */
export function validateContainerRecreateRequestSpec(spec: ContainerRecreateRequestSpec): string[] {
  const errors: string[] = [];
  if (isEmpty(spec.podName)) errors.push(fieldError('spec.podName', 'must not be empty'));
  const containers = isSet(spec.containers) ? spec.containers : [];
  if (containers.length === 0) errors.push(fieldError('spec.containers', 'must not be empty'));
  const seen = new Set<string>();
  containers.forEach((container, i) => {
    const at = child(index('spec.containers', i), 'name');
    if (isEmpty(container.name)) {
      errors.push(fieldError(at, 'must not be empty'));
    } else if (seen.has(container.name)) {
      errors.push(fieldError(at, `duplicate container ${JSON.stringify(container.name)}`));
    }
    seen.add(container.name);
  });
  errors.push(
    ...checkInteger('spec.activeDeadlineSeconds', spec.activeDeadlineSeconds, { min: MIN_CRR_ACTIVE_DEADLINE_SECONDS }),
    ...checkInteger('spec.ttlSecondsAfterFinished', spec.ttlSecondsAfterFinished, { min: 0, int32: true }),
  );
  const strategy = spec.strategy;
  if (isSet(strategy)) {
    errors.push(
      ...checkInteger('spec.strategy.terminationGracePeriodSeconds', strategy.terminationGracePeriodSeconds, { min: 0 }),
      ...checkInteger('spec.strategy.unreadyGracePeriodSeconds', strategy.unreadyGracePeriodSeconds, { min: 0 }),
      ...checkInteger('spec.strategy.minStartedSeconds', strategy.minStartedSeconds, { min: 0, int32: true }),
    );
    const policy = strategy.failurePolicy;
    if (!isEmpty(policy) && !isOneOf(CRR_FAILURE_POLICIES, policy)) {
      errors.push(notSupported('spec.strategy.failurePolicy', policy, CRR_FAILURE_POLICIES));
    }
  }
  return errors;
}

/**
 * Admits a new CRR. `pod` is the pod named by spec.podName in the CRR's namespace and `node` the
 * node it runs on; pass undefined for whichever does not exist.
 */
export function admitContainerRecreateRequestCreate(
  request: ContainerRecreateRequest,
  pod: Pod | undefined,
  node: Node | undefined,
): AdmissionResult<ContainerRecreateRequest> {
  // Webhooks see requests before the API server checks them against the schema.
  if (!isSet(request.spec)) return reject(400, [fieldError('spec', 'required')]);
  const specErrors = [...validateContainerRecreateRequestSpec(request.spec), ...readOnlyFieldErrors(request.spec)];
  if (specErrors.length > 0) return reject(400, specErrors);
  const podName = request.spec.podName;
  const namespace = JSON.stringify(request.metadata?.namespace ?? '');
  const podRef = `pod ${JSON.stringify(podName)}`;
  if (pod === undefined) return reject(400, [fieldError('spec.podName', `${podRef} not found in namespace ${namespace}`)]);
  const podProblem = podProblemFor(pod);
  if (podProblem !== undefined) return reject(400, [fieldError('spec.podName', `${podRef} ${podProblem}`)]);
  const nodeName = pod.spec?.nodeName ?? '';
  const uid = pod.metadata?.uid ?? '';
  if (node === undefined) {
    return reject(400, [fieldError('spec.podName', `node ${JSON.stringify(nodeName)} of ${podRef} not found`)]);
  }

  const crr = structuredClone(request);
  const containerErrors: string[] = [];
  crr.spec.containers = crr.spec.containers.map((container, i) => {
    const snapshot = snapshotContainer(container, pod);
    if (typeof snapshot === 'string') containerErrors.push(fieldError(child(index('spec.containers', i), 'name'), snapshot));
    return typeof snapshot === 'string' ? container : snapshot;
  });
  if (containerErrors.length > 0) return reject(400, containerErrors);

  const metadata = crr.metadata ?? {};
  const labels: Record<string, string> = {
    ...metadata.labels,
    [LABEL_CRR_ACTIVE]: LABEL_CRR_ACTIVE_VALUE,
    [LABEL_CRR_NODE_NAME]: nodeName,
    [LABEL_CRR_POD_UID]: uid,
  };
  if (node.metadata?.labels?.[LABEL_VIRTUAL_KUBELET_KEY] === LABEL_VIRTUAL_KUBELET_VALUE) {
    labels[LABEL_VIRTUAL_KUBELET_KEY] = LABEL_VIRTUAL_KUBELET_VALUE;
  }
  crr.metadata = { ...metadata, labels };

  const strategy = isSet(crr.spec.strategy) ? crr.spec.strategy : {};
  if (isEmpty(strategy.failurePolicy)) strategy.failurePolicy = CRR_FAILURE_POLICY_FAIL;
  const podGrace = pod.spec?.terminationGracePeriodSeconds;
  if (!isSet(strategy.terminationGracePeriodSeconds) && isSet(podGrace)) strategy.terminationGracePeriodSeconds = podGrace;
  crr.spec.strategy = strategy;
  return admit(crr);
}

/** Admits a change to a stored CRR: the spec and its binding to pod and node cannot change. */
export function admitContainerRecreateRequestUpdate(
  crr: ContainerRecreateRequest,
  old: ContainerRecreateRequest,
): AdmissionResult<ContainerRecreateRequest> {
  const errors: string[] = [];
  if (!jsonEqual(crr.spec, old.spec)) errors.push(fieldError('spec', 'field is immutable'));
  for (const key of [LABEL_CRR_POD_UID, LABEL_CRR_NODE_NAME]) {
    if ((crr.metadata?.labels?.[key] ?? '') !== (old.metadata?.labels?.[key] ?? '')) {
      errors.push(fieldError(`metadata.labels[${key}]`, 'field is immutable'));
    }
  }
  const acquired = old.metadata?.annotations?.[ANNOTATION_CRR_UNREADY_ACQUIRED] ?? '';
  if (acquired !== '' && crr.metadata?.annotations?.[ANNOTATION_CRR_UNREADY_ACQUIRED] !== acquired) {
    errors.push(fieldError(`metadata.annotations[${ANNOTATION_CRR_UNREADY_ACQUIRED}]`, 'field is immutable once set'));
  }
  return errors.length > 0 ? reject(403, errors) : admit(crr);
}

function readOnlyFieldErrors(spec: ContainerRecreateRequestSpec): string[] {
  const errors: string[] = [];
  (spec.containers ?? []).forEach((container, i) => {
    for (const field of ['preStop', 'ports', 'statusContext'] as const) {
      if (isSet(container[field])) {
        errors.push(fieldError(child(index('spec.containers', i), field), 'must not be set: it is copied from the pod'));
      }
    }
  });
  return errors;
}

/** Why containers of this pod cannot be recreated, or undefined when they can. */
function podProblemFor(pod: Pod): string | undefined {
  const phase = pod.status?.phase;
  const inactive = phase === 'Succeeded' || phase === 'Failed' || isSet(pod.metadata?.deletionTimestamp);
  // The sidecar terminator creates CRRs to stop sidecars of pods that have already finished.
  const sidecarTerminated = (pod.status?.conditions ?? []).some((c) => c.type === CONDITION_SIDECAR_TERMINATED);
  if (inactive && !sidecarTerminated) {
    return isSet(pod.metadata?.deletionTimestamp) ? 'is being deleted' : `is not active (phase ${phase ?? ''})`;
  }
  if (isEmpty(pod.spec?.nodeName)) return 'is not scheduled to a node yet';
  if (isEmpty(pod.metadata?.uid)) return 'has no metadata.uid';
  return undefined;
}

/** The container with its pod snapshot, or why the pod cannot provide one. */
function snapshotContainer(container: ContainerRecreateRequestContainer, pod: Pod): ContainerRecreateRequestContainer | string {
  const name = JSON.stringify(container.name);
  const podName = JSON.stringify(pod.metadata?.name ?? '');
  const spec = (pod.spec?.containers ?? []).find((c) => c.name === container.name);
  if (spec === undefined) return `container ${name} not found in pod ${podName}`;
  const status = (pod.status?.containerStatuses ?? []).find((s) => s.name === container.name);
  if (status === undefined) return `container ${name} has no status in pod ${podName}`;
  if (isEmpty(status.containerID)) return `container ${name} of pod ${podName} has no containerID yet (not started)`;
  const out: ContainerRecreateRequestContainer = { ...container };
  const preStop = preStopOf(spec);
  if (preStop !== undefined) {
    out.preStop = preStop;
    // Named httpGet ports are resolved against the container's ports by the daemon.
    if (isSet(preStop.httpGet) && isSet(spec.ports)) out.ports = structuredClone(spec.ports);
  }
  out.statusContext = { containerID: status.containerID, restartCount: status.restartCount };
  return out;
}

/** exec, httpGet and tcpSocket hooks; a sleep hook has no CRR form and is dropped, as upstream does. */
function preStopOf(container: Container): ProbeHandler | undefined {
  const hook = container.lifecycle?.preStop;
  if (!isSet(hook)) return undefined;
  const handler: ProbeHandler = {};
  if (isSet(hook.exec)) handler.exec = structuredClone(hook.exec);
  if (isSet(hook.httpGet)) handler.httpGet = structuredClone(hook.httpGet);
  if (isSet(hook.tcpSocket)) handler.tcpSocket = structuredClone(hook.tcpSocket);
  return Object.keys(handler).length > 0 ? handler : undefined;
}
