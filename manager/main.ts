#!/usr/bin/env node
import { managerFlags } from './options.js';
import { FlagError, helpText, parseFlags } from '../kube/flags.js';
import { loadKubeConfig } from '../kube/clientnode.js';
import { errorFields, rootLogger, type LogLevel } from '../kube/log.js';
import { version } from '../kube/version.js';

async function main(): Promise<number> {
  let flags;
  try {
    flags = parseFlags(managerFlags, process.argv.slice(2));
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`kruise-manager: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (flags.help) {
    process.stdout.write(helpText('kruise-manager', 'the kruise-ts controllers and admission webhook', managerFlags));
    return 0;
  }
  if (flags.version) {
    process.stdout.write(`kruise-manager ${version()}\n`);
    return 0;
  }
  const log = rootLogger(flags.logLevel as LogLevel).child({ component: 'manager' });
  try {
    const kc = loadKubeConfig(flags.kubeconfig);
    log.info('configured', { server: kc.getCurrentCluster()?.server });
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
