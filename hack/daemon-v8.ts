/**
 * The V8 settings kruise-daemon runs with in its DaemonSet (deploy/base/daemon.yaml; a unit test
 * checks the two agree), so local installations and benchmarks measure what clusters run. The daemon
 * is I/O-bound: without V8's optimizing compilers (--lite-mode) it uses the same CPU for 200 tags and
 * about 10 MiB less memory; a small young generation keeps RSS low too.
 */
export const DAEMON_V8_FLAGS: readonly string[] = ['--max-semi-space-size=1', '--lite-mode'];
