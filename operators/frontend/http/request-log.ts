/**
 * The log line of a request: every one at debug; every 5xx as an error with its cause, so that none
 * leaves no trace.
 */
import type { Logger } from "../../runtime/logger.ts";

export interface RequestLogValues {
  method: string;
  route: string;
  url: string | undefined;
  status: number;
  seconds: number;
  /** What was thrown, for a failed request. */
  err: unknown;
}

export function logRequest(log: Pick<Logger, "debug" | "error">, values: RequestLogValues): void {
  const { url, seconds, err, ...rest } = values;
  const entry = {
    ...rest,
    path: url?.split("?")[0]?.slice(0, 500),
    durationMs: Math.round(seconds * 1000),
  };
  if (values.status >= 500) log.error("ARM request failed", err, entry);
  else log.debug("ARM request", entry);
}
