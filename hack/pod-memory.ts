// Local installations and benchmarks run kruise-manager and kruise-daemon as processes. Each goes
// into a memory cgroup with its container's limit from deploy/base, as kubelet would place it: Node
// sizes its V8 heap from that limit (half of it, at least 259 MiB; measured with Node 20), and V8
// lets a heap with a small limit grow less beyond what is live between full collections. Without
// the cgroup, on a 24 GiB machine, the heap may reach 4 GiB and V8 lets it grow much further
// before collecting, so the RSS a benchmark reports is not the pod's.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deployDir, render } from './kustomize.js';

export type Workload = 'manager' | 'daemon';

const UNITS: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/** A Kubernetes memory quantity ("512Mi", "1G", "134217728") in bytes. */
export function memoryBytes(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(k|M|G|Ki|Mi|Gi)?$/.exec(quantity.trim());
  const unit = UNITS[m?.[2] ?? ''];
  if (!m || unit === undefined) throw new Error(`memory quantity ${JSON.stringify(quantity)} is not one this script reads (Ki, Mi, Gi, k, M, G or bytes)`);
  return Math.round(Number(m[1]) * unit);
}

interface PodTemplateOwner {
  kind?: string;
  spec?: { template?: { spec?: { containers?: Array<{ name?: string; resources?: { limits?: { memory?: string } } }> } } };
}

const limits = new Map<Workload, number>();

/**
 * The memory limit of the workload's container in deploy/base (Deployment kruise-ts-manager,
 * DaemonSet kruise-ts-daemon), read once per process: an installation starts a process per node.
 */
export function podMemoryLimit(workload: Workload): number {
  const known = limits.get(workload);
  if (known !== undefined) return known;
  const kind = workload === 'manager' ? 'Deployment' : 'DaemonSet';
  const objects = render(join(deployDir(), 'base')) as PodTemplateOwner[];
  const container = objects.find((o) => o.kind === kind)?.spec?.template?.spec?.containers?.find((c) => c.name === workload);
  const limit = container?.resources?.limits?.memory;
  if (limit === undefined) throw new Error(`deploy/base: the ${kind}'s ${workload} container has no memory limit`);
  const bytes = memoryBytes(limit);
  limits.set(workload, bytes);
  return bytes;
}

interface Hierarchy {
  dir: string;
  limitFile: string;
  /** What the limit file takes for no limit. */
  unlimited: string;
  /** Whether a line of /proc/PID/cgroup names the process's memory cgroup. */
  memoryLine: (line: string) => boolean;
  /** The file with the cgroup's memory usage, and memory.stat's key for its inactive file pages. */
  usageFile: string;
  inactiveFileKey: string;
}

/** Where memory cgroups are made here: cgroup v2 with its memory controller, else v1's memory hierarchy. */
function hierarchy(): Hierarchy | { unavailable: string } {
  const v2 = '/sys/fs/cgroup';
  if (existsSync(join(v2, 'cgroup.controllers'))) {
    if (!readFileSync(join(v2, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')) return { unavailable: 'cgroup v2 without its memory controller' };
    if (!readFileSync(join(v2, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('memory')) writeFileSync(join(v2, 'cgroup.subtree_control'), '+memory');
    return { dir: v2, limitFile: 'memory.max', unlimited: 'max', memoryLine: (l) => l.startsWith('0::'), usageFile: 'memory.current', inactiveFileKey: 'inactive_file' };
  }
  const v1 = '/sys/fs/cgroup/memory';
  if (existsSync(join(v1, 'memory.limit_in_bytes'))) {
    return { dir: v1, limitFile: 'memory.limit_in_bytes', unlimited: '-1', memoryLine: (l) => /^\d+:[^:]*\bmemory\b[^:]*:/.test(l), usageFile: 'memory.usage_in_bytes', inactiveFileKey: 'total_inactive_file' };
  }
  return { unavailable: 'no memory cgroup hierarchy under /sys/fs/cgroup' };
}

let warned = false;

/**
 * Makes (or reuses) the memory cgroup `name` with the workload's pod limit and returns its
 * cgroup.procs file, for the process to enter before it execs node. Where cgroups cannot be made
 * (not root, no memory controller) it says so once on stderr and returns undefined: the process then
 * runs without the limit.
 */
function podMemoryCgroup(name: string, workload: Workload): string | undefined {
  try {
    const h = hierarchy();
    if ('unavailable' in h) throw new Error(h.unavailable);
    const dir = join(h.dir, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, h.limitFile), String(podMemoryLimit(workload)));
    return join(dir, 'cgroup.procs');
  } catch (err) {
    if (!warned) process.stderr.write(`kruise-ts processes run without their pods' memory limits: ${(err as Error).message}\n`);
    warned = true;
    return undefined;
  }
}

/** The memory cgroup of a process listening on `port` (or of another number unique to it). */
export function cgroupName(workload: Workload, port: number): string {
  return `kruise-ts-${workload}-${port}`;
}

/**
 * The command and arguments that run node with `args` inside the memory cgroup `cgroup` with the
 * workload's pod limit, or plain node where cgroups cannot be made. The process keeps its PID.
 */
export function nodeInPodMemory(args: string[], workload: Workload, cgroup: string): [string, string[]] {
  const procs = podMemoryCgroup(cgroup, workload);
  // The process enters the cgroup before node starts: Node sizes its heap from the limit at start.
  return procs ? ['/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', procs, process.execPath, ...args]] : [process.execPath, args];
}

/**
 * Removes the memory cgroup `name` once its processes are gone, and says whether it is gone. One
 * still in use stays: it is not ours to force, and the next start with this name reuses it.
 */
export function removePodMemoryCgroup(name: string): boolean {
  try {
    const h = hierarchy();
    if ('unavailable' in h) return true;
    const dir = join(h.dir, name);
    if (existsSync(dir)) rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

/** The directory of the memory cgroup process `pid` runs in, whoever made it (these launchers or a kubelet). */
function memoryCgroupOf(pid: number): { dir: string; hierarchy: Hierarchy } | undefined {
  const h = hierarchy();
  if ('unavailable' in h) return undefined;
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find(h.memoryLine);
  const path = line?.slice(line.lastIndexOf(':') + 1);
  return path ? { dir: join(h.dir, path), hierarchy: h } : undefined;
}

/** The directory of the memory cgroup process `pid` runs in, when it is one of these. */
function cgroupDirOf(pid: number): { dir: string; hierarchy: Hierarchy } | undefined {
  const c = memoryCgroupOf(pid);
  return c && /\/kruise-ts-(manager|daemon)-\d+$/.test(c.dir) ? c : undefined;
}

/**
 * The working set of the memory cgroup process `pid` runs in, as the kubelet counts it (usage less
 * inactive file pages), on cgroup v1 or v2; undefined where the process has no memory cgroup.
 */
export function workingSetBytes(pid: number): number | undefined {
  const c = memoryCgroupOf(pid);
  if (!c) return undefined;
  const usage = Number(readFileSync(join(c.dir, c.hierarchy.usageFile), 'utf8'));
  const stat = readFileSync(join(c.dir, 'memory.stat'), 'utf8');
  const inactive = Number(new RegExp(`^${c.hierarchy.inactiveFileKey} (\\d+)$`, 'm').exec(stat)?.[1] ?? 0);
  return usage - inactive;
}

/** The memory limit process `pid` runs under, when it is in one of these cgroups (for a benchmark's legend). */
export function podMemoryLimitOf(pid: number): number | undefined {
  try {
    const c = cgroupDirOf(pid);
    return c && Number(readFileSync(join(c.dir, c.hierarchy.limitFile), 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Lifts the memory limit of the cgroup process `pid` runs in, for a diagnostic after the
 * measurements: a heap snapshot takes several times the heap (in the pod's limit, and with 1 GiB
 * more, the kernel killed the manager for it). V8's heap limit was set from the pod's limit when the
 * process started, and stays.
 */
export function liftPodMemoryLimit(pid: number): void {
  const c = cgroupDirOf(pid);
  if (c) writeFileSync(join(c.dir, c.hierarchy.limitFile), c.hierarchy.unlimited);
}
