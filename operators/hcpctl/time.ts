/**
 * Time as an SRE reads it in a table: ages in kubectl's short form ("45s", "3m20s", "5h", "12d"),
 * and durations given on the command line in Go's form ("30s", "20m", "1h30m"), as kubectl's
 * `--timeout` takes them.
 */
import { CliError } from "./errors.ts";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Milliseconds as kubectl's printers show an age: more precision while it is short. */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "<invalid>";
  const s = Math.floor(ms / SECOND);
  const m = Math.floor(ms / MINUTE);
  if (s < 120) return `${s}s`;
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  return longDuration(ms);
}

/** Three hours and more: hours, then days, then years. */
function longDuration(ms: number): string {
  const m = Math.floor(ms / MINUTE);
  const h = Math.floor(ms / HOUR);
  const d = Math.floor(ms / DAY);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (h < 192) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 365 * 2) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

/** The age of an RFC 3339 timestamp at `now`; "" when there is none, "<invalid>" when unreadable. */
export function ageOf(timestamp: string | undefined, now: number): string {
  if (!timestamp) return "";
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return "<invalid>";
  return humanDuration(Math.max(0, now - t));
}

const UNITS: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR };

/**
 * A Go duration ("20m", "1h30m", "90s", "500ms", "0") in milliseconds. `what` names the flag in
 * the error, e.g. "--timeout".
 */
export function parseDuration(text: string, what: string): number {
  const trimmed = text.trim();
  if (trimmed === "0") return 0;
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  const joined = parts.map((p) => p[0]).join("");
  if (parts.length === 0 || joined !== trimmed)
    throw new CliError(`invalid ${what} "${text}": expected a duration such as 30s, 20m or 1h30m`);
  return parts.reduce((sum, p) => sum + Number(p[1]) * (UNITS[p[2] ?? ""] ?? 0), 0);
}
