import { parseArgs } from 'node:util';

export interface FlagSpec<T extends string | number | boolean> {
  /** --name */
  name: string;
  /** Environment variable read when the flag is absent. */
  env?: string | undefined;
  default: T;
  help: string;
  /** Validates and explains; returns an error message or undefined. */
  check?: ((v: T) => string | undefined) | undefined;
}

type AnyFlag = FlagSpec<string> | FlagSpec<number> | FlagSpec<boolean>;
export type FlagValues<S extends Record<string, AnyFlag>> = { [K in keyof S]: S[K]['default'] };

export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

export function str(name: string, def: string, help: string, env?: string, check?: (v: string) => string | undefined): FlagSpec<string> {
  return { name, default: def, help, env, check };
}
export function num(name: string, def: number, help: string, env?: string, check?: (v: number) => string | undefined): FlagSpec<number> {
  return { name, default: def, help, env, check };
}
export function bool(name: string, def: boolean, help: string, env?: string): FlagSpec<boolean> {
  return { name, default: def, help, env };
}

function convert(spec: AnyFlag, raw: string | boolean, source: string): string | number | boolean {
  if (typeof spec.default === 'boolean') {
    if (typeof raw === 'boolean') return raw;
    if (/^(true|1|yes)$/i.test(raw)) return true;
    if (/^(false|0|no)$/i.test(raw)) return false;
    throw new FlagError(`${source}: expected true or false, got "${raw}"`);
  }
  if (typeof spec.default === 'number') {
    const n = Number(raw);
    if (typeof raw === 'boolean' || raw.trim() === '' || !Number.isFinite(n)) throw new FlagError(`${source}: expected a number, got "${String(raw)}"`);
    return n;
  }
  if (typeof raw === 'boolean') throw new FlagError(`${source}: expects a value`);
  return raw;
}

/** Parses argv then environment then defaults, in that order of precedence. */
export function parseFlags<S extends Record<string, AnyFlag>>(
  specs: S,
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): FlagValues<S> & { help: boolean; version: boolean } {
  const options: Record<string, { type: 'string' | 'boolean' }> = { help: { type: 'boolean' }, version: { type: 'boolean' } };
  for (const s of Object.values(specs)) options[s.name] = { type: typeof s.default === 'boolean' ? 'boolean' : 'string' };
  const booleans = new Map(Object.values(specs).filter((s) => typeof s.default === 'boolean').map((s) => [s.name, s]));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    // Go's flags take --name=true and --name=false for booleans, as upstream's manifests write them.
    const args = argv.map((a) => {
      const m = /^--([^=]+)=(.*)$/.exec(a);
      const spec = m?.[1] !== undefined ? booleans.get(m[1]) : undefined;
      if (!spec) return a;
      return convert(spec, m?.[2] ?? '', `--${spec.name}`) ? `--${spec.name}` : `--no-${spec.name}`;
    });
    parsed = parseArgs({ args, options, strict: true, allowPositionals: false, allowNegative: true });
  } catch (err) {
    throw new FlagError(`${(err as Error).message}; see --help`);
  }
  const out: Record<string, string | number | boolean> = {
    help: parsed.values['help'] === true,
    version: parsed.values['version'] === true,
  };
  for (const [key, s] of Object.entries(specs)) {
    const fromArgv = parsed.values[s.name];
    const fromEnv = s.env ? env[s.env] : undefined;
    let v: string | number | boolean;
    if (fromArgv !== undefined && !Array.isArray(fromArgv)) v = convert(s, fromArgv, `--${s.name}`);
    else if (fromEnv !== undefined && fromEnv !== '') v = convert(s, fromEnv, `$${s.env}`);
    else v = s.default;
    const problem = (s.check as ((x: typeof v) => string | undefined) | undefined)?.(v);
    if (problem) throw new FlagError(`--${s.name}: ${problem}`);
    out[key] = v;
  }
  return out as FlagValues<S> & { help: boolean; version: boolean };
}

export function helpText(binary: string, summary: string, specs: Record<string, AnyFlag>): string {
  const rows = Object.values(specs).map((s) => {
    const def = typeof s.default === 'string' ? (s.default === '' ? '""' : s.default) : String(s.default);
    return `  --${s.name}${typeof s.default === 'boolean' ? '' : ' value'}\n      ${s.help}\n      default: ${def}${s.env ? `; env: ${s.env}` : ''}`;
  });
  return `${binary}: ${summary}\n\nUsage: ${binary} [flags]\n\nFlags:\n${rows.join('\n')}\n  --help\n      print this help\n  --version\n      print the version\n`;
}
