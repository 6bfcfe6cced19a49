/**
 * What metering must keep through any fault (issue 35): every hour in the ledger reported exactly
 * once, and the emulator's accepted events exactly the ledger's reported rows. Judged on the
 * ledger's rows and the emulator's events (metering.ts reads both):
 * - pending: hours still unreported (the exporter has not caught up yet);
 * - lost: an hour rejected or expired, or marked reported without an accepted event of its key,
 *   ID and quantity;
 * - duplicated (reported twice): an event key the emulator accepted more than once, or an
 *   accepted event no ledger row stands for.
 * Rows of one API key (a cluster made again under its name within an hour) share one event of
 * their sum.
 */
import type { UsageHour } from "../../operators/metering/ledger.ts";
import type { AcceptedUsageEvent } from "../harness/marketplace-emulator/index.ts";

export interface MeteringWorld {
  rows: UsageHour[];
  accepted: AcceptedUsageEvent[];
}

export interface MeteringFindings {
  pending: string[];
  lost: string[];
  duplicated: string[];
}

const keyOf = (resourceId: string, dimension: string, hour: Date | string): string =>
  `${resourceId.toLowerCase()}|${dimension}|${new Date(hour).toISOString()}`;

const micros = (q: string | number): number => Math.round(Number(q) * 1e6);

function group<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const t of items) {
    const k = key(t);
    m.set(k, [...(m.get(k) ?? []), t]);
  }
  return m;
}

/** What is wrong with the rows of one key against the event the API accepted for it. */
function checkKey(k: string, rows: UsageHour[], event: AcceptedUsageEvent | undefined): string[] {
  const lost = rows
    .filter((r) => r.state === "rejected" || r.state === "expired")
    .map((r) => `usage ${k} ${r.state}: ${r.reason ?? "no reason"}`);
  const reported = rows.filter((r) => r.state === "reported");
  if (reported.length === 0) return lost;
  if (!event) return [...lost, `usage ${k} marked reported, yet the metering API holds no event of it`];
  if (reported.some((r) => r.usageEventId !== event.usageEventId))
    lost.push(`usage ${k} marked reported with another event ID than the API's ${event.usageEventId}`);
  const sum = rows.reduce((n, r) => n + micros(r.quantity), 0);
  if (reported.length === rows.length && sum !== micros(event.quantity))
    lost.push(`usage ${k}: the ledger's ${sum / 1e6} billed as ${event.quantity}`);
  return lost;
}

export function judgeMetering(world: MeteringWorld): MeteringFindings {
  const f: MeteringFindings = { pending: [], lost: [], duplicated: [] };
  const events = group(world.accepted, (e) => keyOf(e.resourceId, e.dimension, e.hour));
  const rowsByKey = group(world.rows, (r) => keyOf(r.resourceId, r.dimension, r.hourStart));
  for (const [k, list] of events) {
    if (list.length > 1) f.duplicated.push(`usage ${k} accepted ${list.length} times`);
    if (!rowsByKey.has(k))
      f.duplicated.push(`usage ${k} accepted by the API, yet no ledger row stands for it`);
  }
  const unreported = world.rows.filter((r) => r.state === "unreported");
  if (unreported.length > 0) {
    const oldest = Math.min(...unreported.map((r) => r.hourStart.getTime()));
    f.pending.push(
      `${unreported.length} usage hours unreported, the oldest ${new Date(oldest).toISOString()}`,
    );
  }
  for (const [k, rows] of rowsByKey) f.lost.push(...checkKey(k, rows, events.get(k)?.[0]));
  return f;
}
