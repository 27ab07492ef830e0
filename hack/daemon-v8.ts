/**
 * The V8 settings kruise-daemon runs with in its DaemonSet (deploy/base/daemon.yaml; a unit test
 * checks the two agree), so local installations and benchmarks measure what clusters run. The daemon
 * is I/O-bound: without V8's optimizing compilers (--lite-mode) it uses the same CPU for 200 tags and
 * about 10 MiB less memory; a small young generation keeps RSS low too.
 *
 * --lite-mode turns WebAssembly off, and V8 says so on stderr ("disabling flag --expose_wasm due to
 * conflicting flags") before any log line, which breaks JSON log pipelines: --no-expose-wasm asks
 * for what lite mode does anyway, and V8 stays quiet.
 */
export const DAEMON_V8_FLAGS: readonly string[] = ['--max-semi-space-size=1', '--lite-mode', '--no-expose-wasm'];
