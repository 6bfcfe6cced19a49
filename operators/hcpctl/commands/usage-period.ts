/**
 * The period `hcpctl usage` reads: hours [--from, --to), in UTC, as the ledger keys them. A bound
 * is a month, a day or a whole hour; a time with minutes is refused rather than rounded, since an
 * hour row either is in the period or is not.
 */
import { CliError } from "../errors.ts";

const HOUR_MS = 3_600_000;
const FORM =
  /^(\d{4})-(\d{2})(?:-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?)?)?$/i;
const EXPECTED =
  "expected a month, a day or a whole hour (UTC unless an offset is given): 2026-05, 2026-05-01 or 2026-05-01T13:00Z";

export interface Period {
  from: Date;
  to: Date;
}

/** One bound as typed: `2026-05`, `2026-05-01`, `2026-05-01T13`, `2026-05-01T13:00Z`, `…+02:00`. */
export function parseBound(text: string): Date {
  const m = FORM.exec(text.trim());
  if (!m) throw new CliError(EXPECTED);
  const [, y, mo, d, h, mi, s, zone] = m;
  const fields = [
    Number(y),
    Number(mo) - 1,
    Number(d ?? 1),
    Number(h ?? 0),
    Number(mi ?? 0),
    Number(s ?? 0),
  ] as const;
  const utc = new Date(Date.UTC(...fields));
  if (!roundTrips(utc, fields)) throw new CliError(`no such time in the calendar; ${EXPECTED}`);
  const at = new Date(utc.getTime() - offsetMs(zone));
  if (at.getTime() % HOUR_MS !== 0 || /\.\d*[1-9]/.test(text))
    throw new CliError(
      `usage is counted by the whole hour; give one, such as ${new Date(at.getTime() - (at.getTime() % HOUR_MS)).toISOString().slice(0, 16)}Z`,
    );
  return at;
}

/** Whether the fields name a real instant (Date.UTC moves 2026-02-30 to March without a word). */
function roundTrips(utc: Date, fields: readonly number[]): boolean {
  const back = [
    utc.getUTCFullYear(),
    utc.getUTCMonth(),
    utc.getUTCDate(),
    utc.getUTCHours(),
    utc.getUTCMinutes(),
    utc.getUTCSeconds(),
  ];
  return back.every((v, i) => v === fields[i]);
}

function offsetMs(zone: string | undefined): number {
  if (!zone || zone.toUpperCase() === "Z") return 0;
  const sign = zone.startsWith("-") ? -1 : 1;
  const digits = zone.slice(1).replace(":", "");
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
}

/** The first instant of the UTC month `months` after the one holding `at`. */
export function monthStart(at: number, months = 0): Date {
  const d = new Date(at);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1));
}

/** The period from the flags; each bound left out is the current UTC month's. */
export function periodOf(flags: { from?: Date; to?: Date }, now: number): Period {
  const from = flags.from ?? monthStart(now);
  const to = flags.to ?? monthStart(now, 1);
  if (to <= from)
    throw new CliError(
      `--to ${hourText(to)} is not after --from ${hourText(from)}${flags.from ? "" : " (the default: this month's start)"}: the period is [--from, --to)`,
    );
  return { from, to };
}

/** An hour as people type it: 2026-05-01T13:00Z. */
export function hourText(d: Date): string {
  return `${d.toISOString().slice(0, 16)}Z`;
}
