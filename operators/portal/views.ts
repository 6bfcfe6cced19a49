/**
 * The portal's pages, server-rendered with hono/html (every interpolation escaped) and no script:
 * forms post with the CSRF token; controls appear only where the server would allow them.
 */
import { html } from "hono/html";
import type { PortalSession } from "./session-cookie.ts";

type Html = ReturnType<typeof html>;

export interface ManagementClusterRow {
  name: string;
  phase: string;
  hostedClusters: number;
  capacity: number;
  connected: boolean;
  cordoned: boolean;
}

export interface SessionRow {
  name: string;
  owner: string;
  cluster: string;
  level: string;
  phase: string;
  reason: string;
  decided: boolean;
  revoked: boolean;
}

export function page(title: string, session: PortalSession, token: string, body: Html): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>${title} · HCP portal</title>
        <link rel="stylesheet" href="/static/portal.css" />
      </head>
      <body>
        <header>
          <nav aria-label="Main">
            <a href="/">Region</a> <a href="/clusters">Clusters</a> <a href="/sessions">Sessions</a>
            <a href="/trace">Trace a request</a>
          </nav>
          <form method="post" action="/logout">
            <input type="hidden" name="csrf" value="${token}" />
            Signed in as ${session.name} <button>Sign out</button>
          </form>
        </header>
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`;
}

function postButton(action: string, label: string, token: string): Html {
  return html`<form method="post" action="${action}">
    <input type="hidden" name="csrf" value="${token}" /><button>${label}</button>
  </form>`;
}

/** Asks for a session; on a cluster's page, for that cluster. */
export function sessionRequestForm(token: string, cluster?: { namespace: string; name: string }): Html {
  return html`<section aria-labelledby="request">
    <h2 id="request">Request a session</h2>
    <form method="post" action="/sessions">
      <input type="hidden" name="csrf" value="${token}" />
      <label>Namespace <input name="namespace" required value="${cluster?.namespace ?? ""}" /></label>
      <label>Cluster <input name="cluster" required value="${cluster?.name ?? ""}" /></label>
      <label
        >Level
        <select name="level">
          <option>ReadOnly</option>
          <option>Admin</option>
        </select></label
      >
      <label>Reason <input name="reason" required /></label>
      <label>Seconds <input name="ttlSeconds" type="number" value="3600" min="300" max="43200" /></label>
      <button>Request</button>
    </form>
  </section>`;
}

export function sessionsPage(
  rows: SessionRow[],
  me: string,
  token: string,
  may: { request: boolean; decide: boolean; revoke: boolean },
): Html {
  const actions = (s: SessionRow): Html[] => {
    const out: Html[] = [];
    const base = `/sessions/${encodeURIComponent(s.name)}`;
    if (may.decide && !s.decided && s.owner !== me) {
      out.push(postButton(`${base}/approve`, `Approve ${s.name}`, token));
      out.push(postButton(`${base}/deny`, `Deny ${s.name}`, token));
    }
    if (may.revoke && !s.revoked && s.phase !== "Denied" && s.phase !== "Expired") {
      out.push(postButton(`${base}/revoke`, `Revoke ${s.name}`, token));
    }
    return out;
  };
  const request = may.request ? sessionRequestForm(token) : "";
  return html`<table>
      <caption>
        Access sessions
      </caption>
      <tr>
        <th scope="col">Name</th>
        <th scope="col">Owner</th>
        <th scope="col">Cluster</th>
        <th scope="col">Level</th>
        <th scope="col">Phase</th>
        <th scope="col">Reason</th>
        <th scope="col">Actions</th>
      </tr>
      ${rows.map(
        (s) =>
          html`<tr>
            <td>${s.name}</td>
            <td>${s.owner}</td>
            <td>${s.cluster}</td>
            <td>${s.level}</td>
            <td>${s.phase}</td>
            <td>${s.reason}</td>
            <td>${actions(s)}</td>
          </tr>`,
      )}
    </table>
    ${request}`;
}
