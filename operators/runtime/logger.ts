/**
 * A small structured logger: one JSON line per entry on stderr, with key/value context that
 * sticks to child loggers (cluster, controller, namespace, name). Messages start with a capital
 * letter, have no final period, and are written before the action (docs/style.md §15).
 */
export type LogLevel = "debug" | "info" | "error";
export type LogValues = Record<string, unknown>;

export interface Logger {
  info(msg: string, values?: LogValues): void;
  debug(msg: string, values?: LogValues): void;
  error(msg: string, err: unknown, values?: LogValues): void;
  child(values: LogValues): Logger;
}

const levelOrder: Record<LogLevel, number> = { debug: 0, info: 1, error: 2 };

function configuredLevel(): LogLevel {
  const env = process.env.HCP_LOG_LEVEL;
  return env === "debug" || env === "error" ? env : "info";
}

/** Where a logger's lines go: stderr unless given (e.g. a file of the local region's). */
export type LogSink = (line: string) => void;
const toStderr: LogSink = (line) => process.stderr.write(line);

export function createLogger(
  base: LogValues = {},
  level: LogLevel = configuredLevel(),
  sink: LogSink = toStderr,
): Logger {
  const write = (lvl: LogLevel, msg: string, values: LogValues | undefined): void => {
    if (levelOrder[lvl] < levelOrder[level]) return;
    const line = JSON.stringify({ ts: new Date().toISOString(), level: lvl, msg, ...base, ...values });
    sink(line + "\n");
  };
  return {
    info: (msg, values) => write("info", msg, values),
    debug: (msg, values) => write("debug", msg, values),
    error: (msg, err, values) =>
      write("error", msg, { ...values, err: err instanceof Error ? err.message : String(err) }),
    child: (values) => createLogger({ ...base, ...values }, level, sink),
  };
}

/** A logger that drops everything; for tests that assert state, not logs. */
export const silentLogger: Logger = {
  info: () => undefined,
  debug: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
