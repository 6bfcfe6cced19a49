/**
 * How `hcpctl usage` prints: totals per cluster and dimension (a page of one row each, however
 * many hours), and the hourly rows, which are streamed: each batch is rendered and written before
 * the next is read, so the output of a month of the region never sits in memory.
 */
import { canonicalDecimal } from "../../metering/db.ts";
import type { UsageSummary } from "../../metering/report.ts";
import type { UsageHour } from "../../metering/usage.ts";
import { csvRecord, type CsvField } from "../csv.ts";
import { toJson } from "../output.ts";
import { formatTable } from "../table.ts";
import { hourText, type Period } from "./usage-period.ts";

export type UsageFormat = "table" | "json" | "csv";

export interface RenderOptions {
  period: Period;
  /** The SUBSCRIPTION column, when the rows are not all of one asked-for subscription. */
  subscriptionColumn: boolean;
}

/** The cluster's and node pool's names in an ARM ID (…/hcpOpenShiftClusters/NAME[/nodePools/POOL]). */
export function namesOf(resourceId: string): { cluster: string; pool?: string } {
  const parts = resourceId.split("/");
  const cluster = parts.length >= 9 && parts[1]?.toLowerCase() === "subscriptions" ? parts[8] : undefined;
  if (!cluster) return { cluster: resourceId };
  return parts[10] ? { cluster, pool: parts[10] } : { cluster };
}

const TOTAL_FIELDS = [
  "subscriptionId",
  "clusterId",
  "resourceId",
  "dimension",
  "quantity",
  "hours",
  "reportedHours",
  "unreportedHours",
  "rejectedHours",
  "expiredHours",
] as const satisfies ReadonlyArray<keyof UsageSummary>;

export function renderTotals(
  totals: readonly UsageSummary[],
  format: UsageFormat,
  opts: RenderOptions,
): string {
  if (format === "json") return toJson({ ...periodData(opts.period), items: totals });
  if (format === "csv")
    return [TOTAL_FIELDS, ...totals.map((t) => TOTAL_FIELDS.map((f) => t[f]))].map(csvRecord).join("");
  if (totals.length === 0) return "";
  const sub = opts.subscriptionColumn;
  const header = [
    ...(sub ? ["SUBSCRIPTION"] : []),
    ...["CLUSTER", "CLUSTER ID", "DIMENSION", "QUANTITY", "HOURS"],
    ...["REPORTED", "UNREPORTED", "REJECTED", "EXPIRED"],
  ];
  const rows = totals.map((t) => [
    ...(sub ? [t.subscriptionId] : []),
    namesOf(t.resourceId).cluster,
    t.clusterId,
    t.dimension,
    canonicalDecimal(t.quantity),
    ...[t.hours, t.reportedHours, t.unreportedHours, t.rejectedHours, t.expiredHours].map(String),
  ]);
  return formatTable([header, ...rows]);
}

function periodData(p: Period): { from: string; to: string } {
  return { from: p.from.toISOString(), to: p.to.toISOString() };
}

/** An hourly row as data (json and csv): times in RFC 3339, absent facts left out. */
export function hourData(h: UsageHour): Record<string, string> {
  return {
    hourStart: h.hourStart.toISOString(),
    subscriptionId: h.subscriptionId,
    clusterId: h.clusterId,
    resourceId: h.resourceId,
    resourceUid: h.resourceUid,
    dimension: h.dimension,
    quantity: h.quantity,
    state: h.state,
    recordedAt: h.recordedAt.toISOString(),
    ...(h.reportedAt && { reportedAt: h.reportedAt.toISOString() }),
    ...(h.usageEventId !== undefined && { usageEventId: h.usageEventId }),
    ...(h.reason !== undefined && { reason: h.reason }),
  };
}

const HOUR_FIELDS = [
  "hourStart",
  "subscriptionId",
  "clusterId",
  "resourceId",
  "resourceUid",
  "dimension",
  "quantity",
  "state",
  "recordedAt",
  "reportedAt",
  "usageEventId",
  "reason",
] as const;

/** The text of a stream of hourly rows: its start, each batch, its end. */
export interface HoursStream {
  head(): string;
  batch(rows: readonly UsageHour[]): string;
  tail(): string;
}

export function hoursStream(format: UsageFormat, opts: RenderOptions): HoursStream {
  if (format === "csv") return csvHours();
  if (format === "json") return jsonHours(opts.period);
  return tableHours(opts.subscriptionColumn);
}

function csvHours(): HoursStream {
  return {
    head: () => csvRecord(HOUR_FIELDS),
    batch: (rows) =>
      rows
        .map((h) => {
          const data: Record<string, CsvField> = hourData(h);
          return csvRecord(HOUR_FIELDS.map((f) => data[f]));
        })
        .join(""),
    tail: () => "",
  };
}

/** Byte for byte what `toJson({ from, to, items })` prints, written an item at a time. */
function jsonHours(period: Period): HoursStream {
  let first = true;
  const head = toJson({ ...periodData(period), items: [] }).replace(/\[\]\n\}\n$/, "[");
  return {
    head: () => head,
    batch: (rows) =>
      rows
        .map((h) => {
          const item = JSON.stringify(hourData(h), null, 2).replaceAll("\n", "\n    ");
          const text = `${first ? "" : ","}\n    ${item}`;
          first = false;
          return text;
        })
        .join(""),
    tail: () => `${first ? "" : "\n  "}]\n}\n`,
  };
}

/**
 * A table whose column widths come from the header and the first batch (later rows cannot move
 * what is already printed; a longer cell shifts its own line only, as kubectl's chunked lists do).
 */
function tableHours(subscriptionColumn: boolean): HoursStream {
  const header = [
    "HOUR",
    ...(subscriptionColumn ? ["SUBSCRIPTION"] : []),
    ...["CLUSTER", "POOL", "DIMENSION", "QUANTITY", "STATE", "REASON"],
  ];
  let widths: number[] | undefined;
  const line = (cells: string[], w: readonly number[]): string =>
    `${cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(w[i] ?? 0)))
      .join("   ")
      .trimEnd()}\n`;
  const cellsOf = (h: UsageHour): string[] => {
    const names = namesOf(h.resourceId);
    return [
      hourText(h.hourStart),
      ...(subscriptionColumn ? [h.subscriptionId] : []),
      names.cluster,
      names.pool ?? "-",
      h.dimension,
      canonicalDecimal(h.quantity),
      h.state,
      h.reason ?? "",
    ];
  };
  return {
    head: () => "",
    batch: (rows) => {
      const cells = rows.map(cellsOf);
      if (!widths) {
        const w: number[] = [];
        for (const row of [header, ...cells]) row.forEach((c, i) => (w[i] = Math.max(w[i] ?? 0, c.length)));
        widths = w;
        return [header, ...cells].map((c) => line(c, w)).join("");
      }
      const w = widths;
      return cells.map((c) => line(c, w)).join("");
    },
    tail: () => "",
  };
}
