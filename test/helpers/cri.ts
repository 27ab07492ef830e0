import { join } from 'node:path';
import type { CriClient } from '../../daemon/cri/client.js';
import type { PodSandboxConfig } from '../../proto/gen/runtime/v1/PodSandboxConfig.js';
import type { TestEnv } from './env.js';


function uid(prefix: string): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/** A host-network sandbox (no CNI needed), shaped the way the kubelet shapes one. */
export function hostNetworkSandbox(env: TestEnv, name: string): PodSandboxConfig {
  const podUid = uid(name);
  return {
    metadata: { name, uid: podUid, namespace: 'kruise-ts-test', attempt: 0 },
    log_directory: join(env.containerdDir, 'pod-logs', podUid),
    labels: { app: name, 'io.kubernetes.pod.uid': podUid },
    linux: { security_context: { namespace_options: { network: 'NODE', pid: 'POD', ipc: 'POD' } } },
  };
}

export async function runContainer(
  cri: CriClient,
  sandboxId: string,
  sandbox: PodSandboxConfig,
  name: string,
  image: string,
  command: string[],
): Promise<string> {
  const created = await cri.runtime('CreateContainer', {
    pod_sandbox_id: sandboxId,
    sandbox_config: sandbox,
    config: {
      metadata: { name, attempt: 0 },
      image: { image },
      command,
      log_path: `${name}.log`,
      // The kubelet labels each container with its pod's UID too; the daemon finds a pod's containers by it.
      labels: { 'io.kubernetes.container.name': name, 'io.kubernetes.pod.uid': sandbox.labels?.['io.kubernetes.pod.uid'] ?? '' },
      linux: { security_context: { namespace_options: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } } },
    },
  });
  await cri.runtime('StartContainer', { container_id: created.container_id });
  return created.container_id;
}

export async function removeSandbox(cri: CriClient, sandboxId: string): Promise<void> {
  await cri.runtime('StopPodSandbox', { pod_sandbox_id: sandboxId });
  await cri.runtime('RemovePodSandbox', { pod_sandbox_id: sandboxId });
}
