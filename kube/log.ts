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

// One JSON line per event on stderr; every component logger is a child carrying `component`.
export function rootLogger(level: LogLevel = 'info'): winston.Logger {
  if (!root) {
    root = winston.createLogger({
      level,
      format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
      transports: [new winston.transports.Console({ stderrLevels: [...levels] })],
    });
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
