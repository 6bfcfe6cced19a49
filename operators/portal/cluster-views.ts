/**
 * The clusters list and one cluster's page. The tree is hcpctl's (operators/hcpctl/tree.ts, the
 * model `hcpctl describe` draws), rendered as nested lists: one model, two renderings.
 */
import { html } from "hono/html";
import type { ClusterTree, TreeNode } from "../hcpctl/model.ts";
import type { ClusterPage, ClusterQuery } from "./clusters.ts";

type Html = ReturnType<typeof html>;

const FILTERS = [
  ["subscription", "Subscription"],
  ["state", "State"],
  ["version", "Version"],
  ["managementCluster", "Management cluster"],
] as const;

function pageLink(query: ClusterQuery, page: number): string {
  const p = new URLSearchParams();
  for (const [k] of [["q"], ...FILTERS] as const) if (query[k]) p.set(k, query[k]);
  p.set("page", String(page));
  return `/clusters?${p.toString()}`;
}

export function clustersPage(result: ClusterPage, query: ClusterQuery): Html {
  const select = ([key, label]: (typeof FILTERS)[number]): Html =>
    html`<label
      >${label}
      <select name="${key}">
        <option value="">any</option>
        ${result.choices[key].map(
          (v) => html`<option value="${v}" ${v === query[key] ? "selected" : ""}>${v}</option>`,
        )}
      </select></label
    >`;
  const nav =
    result.pages > 1
      ? html`<nav aria-label="Pages">
          ${result.page > 1 ? html`<a href="${pageLink(query, result.page - 1)}" rel="prev">Previous page</a>` : ""}
          Page ${result.page} of ${result.pages}
          ${
            result.page < result.pages
              ? html`<a href="${pageLink(query, result.page + 1)}" rel="next">Next page</a>`
              : ""
          }
        </nav>`
      : "";
  return html`<search>
      <form method="get" action="/clusters">
        <label>Search <input type="search" name="q" value="${query.q}" /></label>
        ${FILTERS.map(select)}
        <button>Find</button>
      </form>
    </search>
    <p role="status">${result.matched} clusters match</p>
    <table>
      <caption>
        Hosted clusters
      </caption>
      <tr>
        <th scope="col">Cluster</th>
        <th scope="col">Subscription</th>
        <th scope="col">State</th>
        <th scope="col">Ready</th>
        <th scope="col">Version</th>
        <th scope="col">Management cluster</th>
      </tr>
      ${result.rows.map(
        (r) =>
          html`<tr>
            <td><a href="/clusters/${r.namespace}/${r.name}">${r.namespace}/${r.name}</a></td>
            <td>${r.subscription}</td>
            <td>${r.state}</td>
            <td>${r.ready ? "Ready" : "Not ready"}</td>
            <td>${r.version}</td>
            <td>${r.managementCluster}</td>
          </tr>`,
      )}
    </table>
    ${nav}`;
}

function nodeLine(n: TreeNode): Html {
  const title = n.kind ? `${n.kind}/${n.name}` : n.name;
  const s = n.summary;
  if (!s) return html`<strong>${title}</strong>`;
  const ready = s.ready === "" ? "" : s.ready === "True" ? "Ready" : `Ready: ${s.ready}`;
  return html`<strong>${title}</strong> ${ready}${s.severity ? ` (${s.severity})` : ""}
    ${s.reason ? html`<code>${s.reason}</code>` : ""} ${s.message}`;
}

function treeItems(nodes: TreeNode[]): Html {
  return html`<ul>
    ${nodes.map((n) => html`<li>${nodeLine(n)}${n.children.length ? treeItems(n.children) : ""}</li>`)}
  </ul>`;
}

/**
 * One cluster: how far behind what it shows is (hcpctl's staleness, hop by hop), its tree, then
 * the form that asks for a session on it.
 */
export function clusterPageBody(tree: ClusterTree, stale: string[], sessionForm: Html | ""): Html {
  return html`<p>Read at ${tree.observedAt}.</p>
    <p role="status">
      ${stale.length ? `Stale: ${stale.join("; ")}` : "Up to date: every hop has reported the latest generation"}
    </p>
    <section aria-labelledby="tree">
      <h2 id="tree">Across the service and the management cluster</h2>
      ${treeItems([tree.root])}
    </section>
    ${sessionForm}`;
}

/** Asks the controller to try a failure only the user could fix again now, once it is fixed. */
export function retryForm(action: string, token: string): Html {
  return html`<form method="post" action="${action}">
    <input type="hidden" name="csrf" value="${token}" />
    <p>A step failed that only the customer or an SRE can fix. Once it is fixed, look again now:</p>
    <button>Retry the failed step</button>
  </form>`;
}
