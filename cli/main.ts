#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { discoverKruise } from '../kube/kruise.js';
import { loadClusterAccess } from '../kube/kubeconfig.js';
import { rootLogger } from '../kube/log.js';
import { RestClient } from '../kube/rest.js';
import { version } from '../kube/version.js';
import { status, watchCrr, watchJob, type Output } from './commands.js';

const usage = `kruise-ts: progress of kruise-ts image pulls and container recreations (also: kubectl kruise-ts)

Usage:
  kruise-ts status [-n NAMESPACE | -A]
  kruise-ts watch imagepulljob NAME [-n NAMESPACE] [--timeout SECONDS]
  kruise-ts watch crr NAME [-n NAMESPACE] [--timeout SECONDS]

Flags:
  -n, --namespace      namespace (default: default)
  -A, --all-namespaces status across every namespace
      --kubeconfig     path to a kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)
      --timeout        give up watching after this many seconds (default 3600; exit code 2)
  -h, --help           this help
      --version        print the version

Exit codes: 0 done and succeeded, 1 failed (or not found), 2 timed out or bad usage.
`;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        namespace: { type: 'string', short: 'n' },
        'all-namespaces': { type: 'boolean', short: 'A' },
        kubeconfig: { type: 'string' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    });
  } catch (err) {
    process.stderr.write(`kruise-ts: ${(err as Error).message}\n\n${usage}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`kruise-ts ${version()}\n`);
    return 0;
  }
  // Library logs (informer retries) stay quiet unless something is wrong.
  rootLogger('error');
  const namespace = values.namespace ?? 'default';
  const timeoutMs = Number(values.timeout ?? 3600) * 1000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    process.stderr.write('kruise-ts: --timeout must be a positive number of seconds\n');
    return 2;
  }
  const out: Output = { write: (t) => void process.stdout.write(t), tty: process.stdout.isTTY === true };
  const [cmd, kind, name] = positionals;
  let rest: RestClient;
  try {
    rest = new RestClient(loadClusterAccess(values.kubeconfig ?? ''), { qps: 20, burst: 40, userAgent: `kruise-ts-cli/${version()}` });
  } catch (err) {
    process.stderr.write(`kruise-ts: ${(err as Error).message}\n`);
    return 1;
  }
  try {
    const { api } = await discoverKruise(rest);
    if (cmd === 'status') return await status(rest, api, values['all-namespaces'] ? undefined : namespace, out);
    if (cmd === 'watch' && (kind === 'imagepulljob' || kind === 'imagepulljobs' || kind === 'ipj') && name) return await watchJob(rest, api, namespace, name, out, timeoutMs);
    if (cmd === 'watch' && (kind === 'crr' || kind === 'containerrecreaterequest') && name) return await watchCrr(rest, api, namespace, name, out, timeoutMs);
    process.stderr.write(`kruise-ts: unknown command "${positionals.join(' ')}"\n\n${usage}`);
    return 2;
  } catch (err) {
    process.stderr.write(`kruise-ts: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await rest.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
