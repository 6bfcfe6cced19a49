/**
 * Maintenance windows: when the service may start something disruptive on a cluster. Windows are
 * weekly and in the customer's wall-clock time (a window that starts at 02:00 starts at 02:00
 * local on both sides of a daylight-saving change); freezes are absolute instants.
 */
import type { MaintenanceSpec, MaintenanceWindow, Weekday } from "../api/v1alpha1/maintenance.ts";
import { WEEKDAYS } from "../api/v1alpha1/maintenance.ts";

const MINUTES_PER_DAY = 1440;
const MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY;

/** Whether disruptive work may begin now, and why (the reason is shown on the cluster). */
export type WindowVerdict =
  { open: true; reason: string; closesAt?: Date } | { open: false; reason: string; opensAt?: Date };

interface CalendarDay {
  year: number;
  /** 1..12. */
  month: number;
  day: number;
}

interface WallClock extends CalendarDay {
  /** 0 = Monday. */
  weekday: number;
  minuteOfDay: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      weekday: "long",
      hour: "numeric",
      minute: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether Node knows the IANA time zone. */
export function isTimeZone(name: string): boolean {
  try {
    formatterFor(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * Wall clocks already worked out, by zone and minute (the formatter shows no seconds and zone
 * offsets are whole minutes): formatToParts is the costly part of a window decision, and a
 * fleet's runs ask about the same few zones, start times and current minute again and again.
 */
const wallClocks = new Map<string, Readonly<WallClock>>();
const WALL_CLOCKS_KEPT = 4096;

function wallClock(instant: Date, timeZone: string): Readonly<WallClock> {
  const key = `${timeZone} ${Math.floor(instant.getTime() / 60_000)}`;
  let known = wallClocks.get(key);
  if (known === undefined) {
    if (wallClocks.size >= WALL_CLOCKS_KEPT) wallClocks.clear();
    known = Object.freeze(formatWallClock(instant, timeZone));
    wallClocks.set(key, known);
  }
  return known;
}

function formatWallClock(instant: Date, timeZone: string): WallClock {
  const parts: Record<string, string> = {};
  for (const p of formatterFor(timeZone).formatToParts(instant)) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: WEEKDAYS.indexOf(parts.weekday as Weekday),
    minuteOfDay: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

/** The instant a wall-clock time in the zone names (a time skipped by a DST change moves forward). */
function instantOf(timeZone: string, date: CalendarDay, minuteOfDay: number): Date {
  const naive = Date.UTC(date.year, date.month - 1, date.day, 0, minuteOfDay);
  let guess = naive;
  // Two corrections settle the offset, including across a change between guess and answer.
  for (let i = 0; i < 2; i++) {
    const w = wallClock(new Date(guess), timeZone);
    const seen = Date.UTC(w.year, w.month - 1, w.day, 0, w.minuteOfDay);
    guess += naive - seen;
  }
  return new Date(guess);
}

/** "HH:MM" → minutes after midnight; undefined when malformed. */
export function minuteOfDay(text: string): number | undefined {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  return m === null ? undefined : Number(m[1]) * 60 + Number(m[2]);
}

/** The window's length in minutes; an end at or before the start runs past midnight. */
export function windowMinutes(w: MaintenanceWindow): number {
  const start = minuteOfDay(w.start) ?? 0;
  const end = minuteOfDay(w.end) ?? 0;
  return (end - start + MINUTES_PER_DAY) % MINUTES_PER_DAY;
}

/** Minutes the window has left at this wall-clock minute of the week, 0 when it is closed. */
function minutesLeft(w: MaintenanceWindow, minuteOfWeek: number): number {
  const start = minuteOfDay(w.start) ?? 0;
  const length = windowMinutes(w);
  let left = 0;
  for (const day of w.days) {
    const opened = WEEKDAYS.indexOf(day) * MINUTES_PER_DAY + start;
    const since = (minuteOfWeek - opened + MINUTES_PER_WEEK) % MINUTES_PER_WEEK;
    if (since < length) left = Math.max(left, length - since);
  }
  return left;
}

function frozenAt(spec: MaintenanceSpec, at: Date): { until: Date; reason?: string } | undefined {
  for (const f of spec.freezes ?? []) {
    const start = Date.parse(f.start);
    const end = Date.parse(f.end);
    if (at.getTime() >= start && at.getTime() < end) return { until: new Date(end), reason: f.reason };
  }
  return undefined;
}

function windowOpenAt(spec: MaintenanceSpec, at: Date): { open: boolean; closesAt?: Date } {
  const windows = spec.windows ?? [];
  if (windows.length === 0) return { open: true };
  const w = wallClock(at, spec.timeZone ?? "UTC");
  const minuteOfWeek = w.weekday * MINUTES_PER_DAY + w.minuteOfDay;
  const left = Math.max(...windows.map((x) => minutesLeft(x, minuteOfWeek)));
  if (left === 0) return { open: false };
  const closes = instantOf(spec.timeZone ?? "UTC", w, w.minuteOfDay + left);
  return { open: true, closesAt: closes };
}

/** How far ahead a next opening is sought: past the longest freeze and a week of windows. */
const LOOKAHEAD_DAYS = 40;

/** The earliest of `candidates` after `now` at which work may begin. */
function earliestOpen(spec: MaintenanceSpec, now: Date, candidates: Date[]): Date | undefined {
  return candidates
    .filter((c) => c.getTime() > now.getTime())
    .sort((a, b) => a.getTime() - b.getTime())
    .find((c) => windowOpenAt(spec, c).open && frozenAt(spec, c) === undefined);
}

function nextOpening(spec: MaintenanceSpec, now: Date): Date | undefined {
  const tz = spec.timeZone ?? "UTC";
  const freezeEnds = (spec.freezes ?? []).map((f) => new Date(Date.parse(f.end)));
  const today = wallClock(now, tz);
  // Day by day, stopping at the first day with an opening: a window start on a later local day is
  // later, and each start costs time-zone arithmetic (10,000 waiting runs look this up).
  for (let k = 0; k <= LOOKAHEAD_DAYS; k++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + k));
    const weekday = (date.getUTCDay() + 6) % 7;
    const starts: Date[] = [];
    for (const w of spec.windows ?? []) {
      if (!w.days.some((d) => WEEKDAYS.indexOf(d) === weekday)) continue;
      const start = minuteOfDay(w.start) ?? 0;
      const day = { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
      starts.push(instantOf(tz, day, start));
    }
    const opening = earliestOpen(spec, now, starts);
    if (opening !== undefined) return earliestOpen(spec, now, [...freezeEnds, opening]);
  }
  return earliestOpen(spec, now, freezeEnds);
}

const iso = (d: Date): string => d.toISOString().replace(/\.000Z$/, "Z");

/**
 * Whether the service may begin disruptive work on a cluster with this maintenance spec at `now`.
 * Urgent work (an SRE's call) begins regardless, and says so.
 */
export function maintenanceWindowAt(
  spec: MaintenanceSpec | undefined,
  now: Date,
  urgent = false,
): WindowVerdict {
  const s = spec ?? {};
  const frozen = frozenAt(s, now);
  const window = windowOpenAt(s, now);
  if (urgent && (frozen !== undefined || !window.open))
    return { open: true, reason: "urgent: started outside the cluster's maintenance window" };
  if (frozen !== undefined) {
    const why = frozen.reason === undefined ? "" : ` (${frozen.reason})`;
    return {
      open: false,
      reason: `maintenance frozen until ${iso(frozen.until)}${why}`,
      opensAt: nextOpening(s, now),
    };
  }
  if (!window.open) {
    const opensAt = nextOpening(s, now);
    const when = opensAt === undefined ? "" : `; next window opens ${iso(opensAt)}`;
    return { open: false, reason: `outside the cluster's maintenance windows${when}`, opensAt };
  }
  if ((s.windows ?? []).length === 0) return { open: true, reason: "no maintenance windows set: any time" };
  return {
    open: true,
    reason: `inside a maintenance window until ${iso(window.closesAt!)}`,
    closesAt: window.closesAt,
  };
}
