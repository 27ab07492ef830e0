// The README's flags and metrics tables, generated from the code that defines them so the two
// cannot drift apart (test/unit/readme.test.ts fails when they do).
//   node dist/hack/reference-docs.js          rewrites README.md between the markers
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { DaemonMetrics } from '../daemon/metrics.js';
import { daemonFlags } from '../daemon/options.js';
import type { FlagSpec } from '../kube/flags.js';
import { ManagerMetrics } from '../manager/metrics.js';
import { managerFlags } from '../manager/options.js';
import { projectRoot } from './root.js';

type AnyFlag = FlagSpec<string> | FlagSpec<number> | FlagSpec<boolean>;

const cell = (t: string): string => t.replace(/\|/g, '\\|');

function flagsTable(title: string, specs: Record<string, AnyFlag>): string {
  const rows = Object.values(specs).map((s) => {
    const def = s.default === '' ? '""' : String(s.default);
    return `| \`--${s.name}\` | ${s.env ? `\`${s.env}\`` : ''} | \`${def}\` | ${cell(s.help)} |`;
  });
  return [`**${title}**`, '', '| flag | environment | default | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

interface MetricInfo {
  name: string;
  help: string;
  type: string;
  labelNames: string[];
}

function metricsTable(title: string, registry: Registry, prefix: string): string {
  const metrics = (registry.getMetricsAsArray() as unknown as Array<{ name: string; help: string; type: string; labelNames?: string[] }>)
    .filter((m) => m.name.startsWith(prefix))
    .map((m): MetricInfo => ({ name: m.name, help: m.help, type: String(m.type), labelNames: m.labelNames ?? [] }));
  const rows = metrics.map((m) => `| \`${m.name}\` | ${m.type} | ${m.labelNames.map((l) => `\`${l}\``).join(', ')} | ${cell(m.help)} |`);
  return [`**${title}**`, '', '| metric | type | labels | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

export function flagsSection(): string {
  return [flagsTable('kruise-daemon', daemonFlags), flagsTable('kruise-manager', managerFlags)].join('\n\n');
}

export function metricsSection(): string {
  return [
    metricsTable('kruise-daemon', new DaemonMetrics().registry, 'kruise_'),
    metricsTable('kruise-manager', new ManagerMetrics().registry, 'kruise_'),
    'Both also export the Node.js process metrics of prom-client (`process_*`, `nodejs_*`).',
  ].join('\n\n');
}

/** `text` with the part between `<!-- name:begin -->` and `<!-- name:end -->` replaced by `body`. */
export function replaceSection(text: string, name: string, body: string): string {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error(`README.md has no ${begin} … ${end} section`);
  return `${text.slice(0, i + begin.length)}\n${body}\n${text.slice(j)}`;
}

export function renderReadme(text: string): string {
  return replaceSection(replaceSection(text, 'flags', flagsSection()), 'metrics', metricsSection());
}

if (process.argv[1]?.endsWith('reference-docs.js')) {
  const file = join(projectRoot(), 'README.md');
  writeFileSync(file, renderReadme(readFileSync(file, 'utf8')));
  console.log('README.md: flags and metrics tables regenerated');
}
