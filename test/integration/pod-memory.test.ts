import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive, startManager, startNode } from '../../hack/kruise.js';
import { cgroupName, podMemoryLimit, podMemoryLimitOf, removePodMemoryCgroup, workingSetBytes } from '../../hack/pod-memory.js';
import { installation } from '../helpers/manager.js';
import { eventually } from '../helpers/kube.js';

// Local installations run each binary under its pod's memory limit, as kubelet would: the
// benchmarks' memory figures are then the pods'.
describe('kruise-ts processes under their pods memory limits', () => {
  it("runs the installation's manager and daemons in memory cgroups of deploy/base's limits", () => {
    const inst = installation();
    expect(podMemoryLimitOf(inst.manager.pid)).toBe(podMemoryLimit('manager'));
    expect(inst.daemons.length).toBeGreaterThan(0);
    for (const d of inst.daemons) expect({ node: d.node, limit: podMemoryLimitOf(d.pid) }).toEqual({ node: d.node, limit: podMemoryLimit('daemon') });
  });

  it("reads a process's working set from its memory cgroup, as the install benchmark reads the pods'", () => {
    const inst = installation();
    for (const pid of [inst.manager.pid, ...inst.daemons.map((d) => d.pid)]) {
      const bytes = workingSetBytes(pid) ?? 0;
      // A running node process holds tens of MiB, always inside its pod's limit.
      expect(bytes).toBeGreaterThan(10 * 2 ** 20);
      expect(bytes).toBeLessThan(podMemoryLimit(pid === inst.manager.pid ? 'manager' : 'daemon'));
    }
  });

  it('starts node inside the limit, so V8 sizes its heap from it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-podmem-'));
    const out = join(dir, 'out');
    const cgroup = cgroupName('manager', process.pid);
    const pid = startNode(['-e', `require('fs').writeFileSync(${JSON.stringify(out)}, String(require('v8').getHeapStatistics().heap_size_limit)); setTimeout(() => {}, 1000)`], join(dir, 'log'), 'manager', cgroup);
    try {
      expect(pid).toBeGreaterThan(0);
      const heapLimit = await eventually(() => Number(readFileSync(out, 'utf8')), 10_000);
      // Unconstrained, V8 allows 4 GiB on this machine; in 512 MiB it allows about half of that.
      expect(heapLimit).toBeLessThan(podMemoryLimit('manager'));
      expect(heapLimit).toBeGreaterThan(podMemoryLimit('manager') / 4);
      // The cgroup goes once node has exited, not once its output is written (it lingers a second
      // after it, as a busy CI machine would have it do): removed before, the cgroup stayed.
      await eventually(() => expect(processAlive(pid)).toBe(false), 10_000);
      expect(removePodMemoryCgroup(cgroup)).toBe(true);
    } finally {
      removePodMemoryCgroup(cgroup);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a manager that never becomes ready is stopped and its memory cgroup removed (nothing records it for down)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-podmem-'));
    const out = join(dir, 'cgroup');
    const port = process.pid + 1;
    try {
      // It says which memory cgroup it ran in, then exits before serving /readyz, as a manager
      // refused by the cluster does.
      const script = `require('fs').writeFileSync(${JSON.stringify(out)}, require('fs').readFileSync('/proc/self/cgroup', 'utf8')); process.exit(3)`;
      await expect(startManager(['-e', script], join(dir, 'log'), port)).rejects.toThrow(/process exited/);
      const line = readFileSync(out, 'utf8').split('\n').find((l) => /:memory:/.test(l) || l.startsWith('0::')) ?? '';
      const path = line.slice(line.lastIndexOf(':') + 1);
      expect(path).toBe(`/${cgroupName('manager', port)}`);
      for (const mount of ['/sys/fs/cgroup/memory', '/sys/fs/cgroup']) expect(existsSync(join(mount, path))).toBe(false);
    } finally {
      removePodMemoryCgroup(cgroupName('manager', port));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
