#!/usr/bin/env node
import { detectRuntime } from './cri/endpoint.js';
import { daemonFlags, explicitEndpoint } from './options.js';
import { FlagError, helpText, parseFlags } from '../kube/flags.js';
import { loadKubeConfig } from '../kube/config.js';
import { errorFields, rootLogger, type LogLevel } from '../kube/log.js';
import { version } from '../kube/version.js';

async function main(): Promise<number> {
  let flags;
  try {
    flags = parseFlags(daemonFlags, process.argv.slice(2));
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`kruise-daemon: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (flags.help) {
    process.stdout.write(helpText('kruise-daemon', 'the kruise-ts node agent (image pulls and container recreation)', daemonFlags));
    return 0;
  }
  if (flags.version) {
    process.stdout.write(`kruise-daemon ${version()}\n`);
    return 0;
  }
  const log = rootLogger(flags.logLevel as LogLevel).child({ component: 'daemon' });
  if (flags.nodeName === '') {
    log.error('no node name: set NODE_NAME (the DaemonSet passes spec.nodeName through the downward API) or --node-name');
    return 1;
  }
  try {
    loadKubeConfig(flags.kubeconfig);
    const endpoint = explicitEndpoint(flags.runtimeEndpoint, flags.socketFile, flags.hostRoot);
    const runtime = await detectRuntime({ ...(endpoint ? { endpoint } : {}), hostRoot: flags.hostRoot });
    log.info('container runtime found', {
      node: flags.nodeName,
      endpoint: runtime.endpoint,
      runtime: `${runtime.runtimeName} ${runtime.runtimeVersion}`,
    });
  } catch (err) {
    log.error(err instanceof Error ? err.message : String(err), errorFields(err));
    return 1;
  }
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  log.info('stopping');
  return 0;
}

process.exitCode = await main();
