/**
 * A cluster's ARM operations and events as tables, and a request's trace: the RequestTrace
 * `hcpctl trace` prints, rendered as HTML (one model, two renderings). States are words, never
 * colour alone.
 */
import { html } from "hono/html";
import { timeText } from "../hcpctl/render-trace.ts";
import type { OperationTrace, RequestTrace } from "../hcpctl/trace.ts";
import type { EventRow, OperationRow } from "./operations.ts";

type Html = ReturnType<typeof html>;

const traceLink = (id: string): string => `/trace?${new URLSearchParams({ id }).toString()}`;

export function operationsSection(rows: readonly OperationRow[]): Html {
  const body = rows.length
    ? html`<table>
        <caption>
          ARM operations, newest first
        </caption>
        <tr>
          <th scope="col">Resource</th>
          <th scope="col">Request</th>
          <th scope="col">Status</th>
          <th scope="col">Started</th>
          <th scope="col">Ended</th>
          <th scope="col">Request ID</th>
          <th scope="col">Error</th>
        </tr>
        ${rows.map(
          (r) =>
            html`<tr>
              <td>${r.target}</td>
              <td>${r.request}</td>
              <td>${r.status}</td>
              <td>${r.startTime}</td>
              <td>${r.endTime}</td>
              <td>${r.requestId ? html`<a href="${traceLink(r.requestId)}">${r.requestId}</a>` : ""}</td>
              <td>${r.error}</td>
            </tr>`,
        )}
      </table>`
    : html`<p>No ARM operation is recorded on this cluster or its node pools.</p>`;
  return html`<section aria-labelledby="operations">
    <h2 id="operations">ARM operations</h2>
    ${body} ${traceForm("")}
  </section>`;
}

export function eventsSection(rows: readonly EventRow[]): Html {
  const body = rows.length
    ? html`<table>
        <caption>
          Events, newest first
        </caption>
        <tr>
          <th scope="col">Last seen</th>
          <th scope="col">Object</th>
          <th scope="col">Type</th>
          <th scope="col">Reason</th>
          <th scope="col">Count</th>
          <th scope="col">Message</th>
        </tr>
        ${rows.map(
          (e) =>
            html`<tr>
              <td>${e.last}</td>
              <td>${e.object}</td>
              <td>${e.type}</td>
              <td>${e.reason}</td>
              <td>${e.count}</td>
              <td>${e.message}</td>
            </tr>`,
        )}
      </table>`
    : html`<p>No events about this cluster or its node pools.</p>`;
  return html`<section aria-labelledby="events">
    <h2 id="events">Events</h2>
    ${body}
  </section>`;
}

/** A GET form: reading a trace changes nothing, so it needs no CSRF token. */
export function traceForm(id: string): Html {
  return html`<form method="get" action="/trace">
    <label>Correlation or client request ID <input type="search" name="id" value="${id}" required /></label>
    <button>Trace</button>
  </form>`;
}

function operationTrace(t: OperationTrace): Html {
  const d = t.operation;
  const title = `${d.request} of ${t.target.kind}/${t.target.namespace ?? ""}/${t.target.name}`;
  return html`<section aria-label="${title}">
    <h2>${title}</h2>
    <p>Operation ${d.id}, matched by ${t.matchedBy}, recorded in ${t.recordedIn}.</p>
    <table>
      <caption>
        Hops
      </caption>
      <tr>
        <th scope="col">Hop</th>
        <th scope="col">State</th>
        <th scope="col">Time</th>
        <th scope="col">Seconds since previous</th>
        <th scope="col">Object</th>
        <th scope="col">Message</th>
      </tr>
      ${t.hops.map(
        (h) =>
          html`<tr>
            <td>${h.hop}</td>
            <td>${h.state}</td>
            <td>${timeText(h)}</td>
            <td>${h.sincePreviousSeconds ?? ""}</td>
            <td>${h.object.kind}/${h.object.name}</td>
            <td>${h.message}${h.waitingFor ? `; waiting for ${h.waitingFor}` : ""}</td>
          </tr>`,
      )}
    </table>
  </section>`;
}

/** The trace page: the form, then each operation the request made, or why there is none. */
export function tracePageBody(id: string, trace: RequestTrace | undefined): Html {
  const result = !id
    ? ""
    : trace && trace.operations.length
      ? html`<p role="status">Read at ${trace.observedAt}: ${trace.operations.length} operation(s).</p>
          ${trace.operations.map(operationTrace)}`
      : html`<p role="status">
          No HcpCluster, NodePool or operation record carries the request ID ${id} (records are kept seven
          days).
        </p>`;
  return html`${traceForm(id)} ${result}`;
}
