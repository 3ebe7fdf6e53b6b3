// Structured JSON logs, one object per line on stdout. Nothing that could hold a secret (tokens, query strings with
// access_token, bodies) is ever passed here.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type Logger = {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
};

export function createLogger(level: LogLevel, base: Record<string, unknown> = {}, write = (line: string) => process.stdout.write(line)): Logger {
  const emit = (at: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (order[at] < order[level]) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: at, message, ...base, ...fields })}\n`);
  };
  return {
    debug: (message, fields) => emit('debug', message, fields),
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

/** The path of a URL without its query string, for logging (the query may carry access_token). */
export function pathOnly(url: string): string {
  const at = url.indexOf('?');
  return at === -1 ? url : url.slice(0, at);
}
