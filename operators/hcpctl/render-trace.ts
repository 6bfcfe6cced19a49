/**
 * A request's trace as text: per operation a heading (what the request asked, of which resource,
 * with which IDs, and how it ended), then one row per hop: HOP / STATE / TIME / +PREV / OBJECT /
 * MESSAGE. TIME is the hop's own time in UTC ("≤" when the objects record only a bound); +PREV
 * the time since the previous hop with one; a Pending hop says what it waits for.
 */
import { stateStyle, type Painter } from "./paint.ts";
import { formatTable } from "./table.ts";
import { humanDuration } from "./time.ts";
import type { Hop, HopState, OperationTrace, RequestTrace } from "./trace.ts";

const STATE_COLOURS: Record<HopState, { ready: string; severity: "" | "Info" | "Warning" | "Error" }> = {
  Done: { ready: "True", severity: "" },
  Pending: { ready: "False", severity: "Info" },
  Unknown: { ready: "Unknown", severity: "Warning" },
  Failed: { ready: "False", severity: "Error" },
};

const HEADER = ["HOP", "STATE", "TIME", "+PREV", "OBJECT", "MESSAGE"];

/** RFC 3339 in whole seconds, as the apiserver keeps times. */
export function timeText(hop: Hop): string {
  if (!hop.time) return "-";
  const t = Date.parse(hop.time);
  const text = Number.isNaN(t) ? hop.time : new Date(t).toISOString().replace(/\.\d+Z$/, "Z");
  return hop.upperBound ? `≤${text}` : text;
}

function sinceText(hop: Hop): string {
  const s = hop.sincePreviousSeconds;
  if (s === undefined) return "-";
  return s < 0 ? `-${humanDuration(-s * 1000)}` : `+${humanDuration(s * 1000)}`;
}

function messageText(hop: Hop): string {
  if (!hop.waitingFor) return hop.message;
  const waiting = `waiting for ${hop.waitingFor}`;
  return hop.message && hop.message !== "not reached" ? `${hop.message}; ${waiting}` : waiting;
}

function row(hop: Hop): string[] {
  const object = hop.object.name ? `${hop.object.kind}/${hop.object.name}` : hop.object.kind;
  return [
    hop.hop,
    hop.state,
    timeText(hop),
    sinceText(hop),
    object,
    messageText(hop).replace(/\s*\n\s*/g, " "),
  ];
}

function heading(t: OperationTrace): string {
  const op = t.operation;
  const ids = [
    op.correlationRequestId && `correlation id ${op.correlationRequestId}`,
    op.clientRequestId && `client request id ${op.clientRequestId}`,
  ].filter(Boolean);
  const target = `${t.target.kind}/${t.target.name} in ${t.target.namespace ?? ""}`;
  return [
    `Operation ${op.id}: ${op.request} of ${op.resourceId || target}`,
    `  ${[target, ...ids].join("; ")}`,
  ].join("\n");
}

function operationText(t: OperationTrace, paint: Painter): string {
  const states = t.hops.map((h) => h.state);
  const table = formatTable([HEADER, ...t.hops.map(row)], (text, r, column) => {
    if (r === 0) return paint("bold", text);
    const state = states[r - 1];
    const colour = state && column === 1 ? STATE_COLOURS[state] : undefined;
    const style = colour ? stateStyle(colour.ready, colour.severity) : undefined;
    return style ? paint(style, text) : text;
  });
  return `${heading(t)}\n${table}`;
}

export function renderTrace(trace: RequestTrace, paint: Painter): string {
  return trace.operations.map((t) => operationText(t, paint)).join("\n");
}
