/**
 * Cron expressions as Velero reads a Schedule's spec.schedule (robfig/cron's standard parser: 5
 * fields, minute hour day-of-month month day-of-week, day-of-week 0 or 7 for Sunday), in UTC. The
 * cluster controller needs the period to tell an overdue backup; the HyperShift simulator needs
 * the due times to play Velero.
 */

export interface Cron {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  daysOfWeek: ReadonlySet<number>;
  /** robfig/cron: when both day fields are restricted a day matches either; else both. */
  eitherDay: boolean;
}

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 7 },
] as const;

/** The bounds of one item: `*`, `n`, `n-m`, each with an optional step (`5/15` runs to the end, as robfig has it). */
function boundsOf(m: RegExpExecArray, f: (typeof FIELDS)[number]): [number, number] {
  if (m[1] === "*") return [f.min, f.max];
  const lo = Number(m[2]);
  if (m[3] !== undefined) return [lo, Number(m[3])];
  return [lo, m[4] !== undefined ? f.max : lo];
}

function parseField(text: string, f: (typeof FIELDS)[number]): { values: Set<number>; star: boolean } {
  const values = new Set<number>();
  let star = false;
  for (const item of text.split(",")) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
    if (!m) throw new Error(`${f.name} "${item}" is not a number, range, * or step`);
    const step = m[4] === undefined ? 1 : Number(m[4]);
    const [lo, hi] = boundsOf(m, f);
    star ||= m[1] === "*" && m[4] === undefined;
    if (lo < f.min || hi > f.max) throw new Error(`${f.name} "${item}" is outside ${f.min}-${f.max}`);
    if (lo > hi) throw new Error(`${f.name} "${item}" begins after it ends`);
    if (step < 1) throw new Error(`${f.name} "${item}" has a step of 0`);
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return { values, star };
}

/** The parsed expression; throws an Error saying which field is wrong. */
export function parseCron(expr: string): Cron {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`"${expr}" has ${parts.length} fields, not 5`);
  const [minute, hour, dom, month, dow] = parts.map((p, i) => parseField(p, FIELDS[i] ?? FIELDS[0]));
  if (!minute || !hour || !dom || !month || !dow) throw new Error(`"${expr}" has not 5 fields`);
  const daysOfWeek = new Set([...dow.values].map((d) => d % 7));
  return {
    minutes: minute.values,
    hours: hour.values,
    daysOfMonth: dom.values,
    months: month.values,
    daysOfWeek,
    eitherDay: !dom.star && !dow.star,
  };
}

/** Why the expression is not valid, or undefined. */
export function cronError(expr: string): string | undefined {
  try {
    parseCron(expr);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

function dayMatches(c: Cron, d: Date): boolean {
  const dom = c.daysOfMonth.has(d.getUTCDate());
  const dow = c.daysOfWeek.has(d.getUTCDay());
  return c.eitherDay ? dom || dow : dom && dow;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Past this no time matches (e.g. "0 0 31 2 *"): robfig gives up after five years too. */
const SEARCH_LIMIT_MS = 5 * 366 * 24 * HOUR;

/** The first time strictly after `after` the expression fires (whole minutes, UTC); undefined if never. */
export function nextFire(c: Cron, after: Date): Date | undefined {
  let t = Math.floor(after.getTime() / MINUTE) * MINUTE + MINUTE;
  const limit = after.getTime() + SEARCH_LIMIT_MS;
  while (t <= limit) {
    const d = new Date(t);
    if (!c.months.has(d.getUTCMonth() + 1) || !dayMatches(c, d)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
    } else if (!c.hours.has(d.getUTCHours())) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1);
    } else if (!c.minutes.has(d.getUTCMinutes())) {
      t += MINUTE;
    } else return d;
  }
  return undefined;
}

/**
 * The gap between the two firings after `after`: the period a backup is expected in. Undefined
 * when the expression never fires twice.
 */
export function periodAfter(c: Cron, after: Date): number | undefined {
  const first = nextFire(c, after);
  const second = first && nextFire(c, first);
  return first && second ? second.getTime() - first.getTime() : undefined;
}
