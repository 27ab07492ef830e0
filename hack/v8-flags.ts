// The V8 settings the binaries run with in their pods (deploy/base; a unit test checks they agree),
// so local installations and benchmarks measure what clusters run.

/**
 * kruise-daemon's (deploy/base/daemon.yaml). The daemon is I/O-bound: without V8's optimizing
 * compilers (--lite-mode) it uses the same CPU for 200 tags and about 10 MiB less memory; a small
 * young generation keeps RSS low too.
 *
 * --lite-mode turns WebAssembly off, and V8 says so on stderr ("disabling flag --expose_wasm due to
 * conflicting flags") before any log line, which breaks JSON log pipelines: --no-expose-wasm asks
 * for what lite mode does anyway, and V8 stays quiet.
 */
export const DAEMON_V8_FLAGS: readonly string[] = ['--max-semi-space-size=1', '--lite-mode', '--no-expose-wasm'];

/**
 * kruise-manager's (deploy/base/manager.yaml): a heap of three quarters of its 512Mi limit. Node
 * otherwise sizes the heap at half of its cgroup's memory (259 MiB of 512 MiB, Node 20), and with
 * 50 jobs over 5,000 nodes the manager died of a full heap at 254 MiB with half its pod's memory
 * unused (BENCHMARKS.md). The rest of the limit holds the young generation, code and the buffers of
 * list and watch responses. A larger limit needs a larger heap here too.
 */
export const MANAGER_V8_FLAGS: readonly string[] = ['--max-old-space-size=384'];
