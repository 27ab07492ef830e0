import winston from 'winston';

export type Logger = winston.Logger;

const levels = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof levels)[number];

export function isLogLevel(v: string): v is LogLevel {
  return (levels as readonly string[]).includes(v);
}

/** An error's message; duck-typed, since Node's own errors fail instanceof Error in another realm (jest's vm contexts). */
export function errorMessage(err: unknown): string {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(err);
}

// Errors become {message, code, cause} so one log line carries the whole chain without a stack dump.
export function errorFields(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { error: String(err) };
  const out: Record<string, unknown> = { error: err.message };
  const code = (err as { code?: unknown }).code;
  if (code !== undefined) out['code'] = code;
  if (err.cause !== undefined) out['cause'] = err.cause instanceof Error ? err.cause.message : String(err.cause);
  return out;
}

let root: winston.Logger | undefined;
type LevelMethods = Record<LogLevel, (this: winston.Logger, ...args: unknown[]) => winston.Logger>;

/**
 * winston timestamps and serialises every message, and only then does its transport drop the ones
 * below the level: a daemon at `--log-level warn` still serialised its two info lines per pull (25 ms
 * of CPU over 200 pulls in a CPU profile of the pull-path benchmark). A message below the level now
 * stops before any of that. Child loggers inherit these methods, so the check reads the root's
 * level at the time of the call.
 */
function skipDisabledLevels(logger: winston.Logger): void {
  const proto = Object.getPrototypeOf(logger) as LevelMethods;
  const methods = logger as unknown as LevelMethods;
  for (const level of levels) {
    const write = proto[level];
    methods[level] = function (this: winston.Logger, ...args: unknown[]): winston.Logger {
      return this.isLevelEnabled(level) ? write.apply(this, args) : this;
    };
  }
}

// One JSON line per event on stderr; every component logger is a child carrying `component`.
export function rootLogger(level: LogLevel = 'info'): winston.Logger {
  if (!root) {
    root = winston.createLogger({
      level,
      format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
      transports: [new winston.transports.Console({ stderrLevels: [...levels] })],
    });
    skipDisabledLevels(root);
  } else {
    root.level = level;
  }
  return root;
}

export function componentLogger(component: string): winston.Logger {
  return rootLogger(root ? (root.level as LogLevel) : (process.env['LOG_LEVEL'] as LogLevel | undefined) ?? 'info').child({
    component,
  });
}
