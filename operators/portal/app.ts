/**
 * The portal's routes (decision 0014): every request's session read from its sealed cookie,
 * every route authorised on the server by role, every POST checked for Origin and CSRF token, and
 * every action written as one audit line. Views and writes come through `PortalBackend` (informer
 * caches and the apiserver as the portal's broker identity), so tests drive it with app.request().
 */
import { readFileSync } from "node:fs";
import { Hono, type Context } from "hono";
import { deleteCookie, getCookie } from "hono/cookie";
import { html } from "hono/html";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import type { ClusterTree } from "../hcpctl/model.ts";
import { clusterPage, parseClusterQuery } from "./clusters.ts";
import { clusterPageBody, clustersPage, retryForm } from "./cluster-views.ts";
import type { RequestTrace } from "../hcpctl/trace.ts";
import type { EventRow, OperationRow } from "./operations.ts";
import { eventsSection, operationsSection, tracePageBody } from "./operation-views.ts";
import { secureHeaders } from "hono/secure-headers";
import { csrfToken, csrfValid, originValid } from "./csrf.ts";
import { allowed, rolesOf, type PortalAction, type PortalRole } from "./roles.ts";
import { openSession, SESSION_COOKIE, type PortalSession } from "./session-cookie.ts";
import {
  page,
  sessionRequestForm,
  sessionsPage,
  type ManagementClusterRow,
  type SessionRow,
} from "./views.ts";

export interface ActionTarget {
  kind: string;
  name: string;
}

/** One cluster's page: hcpctl's tree of it and how stale what it shows is. */
export interface ClusterView {
  tree: ClusterTree;
  stale: string[];
  /** Degraded: a step failed that only the user could fix; an operator may ask for a retry. */
  failed: boolean;
  operations: OperationRow[];
  events: EventRow[];
}

/** What the portal reads and writes; each write acts for `actor` (the signed-in person). */
export interface PortalBackend {
  managementClusters(): ManagementClusterRow[];
  /** Every HcpCluster, from the cache. */
  clusters(): readonly HcpCluster[];
  /** One cluster's tree, or undefined when there is no such cluster. */
  cluster(namespace: string, name: string): Promise<ClusterView | undefined>;
  /** Asks the cluster controller to try a held failure again now (RETRY_ANNOTATION). */
  retry(actor: string, namespace: string, name: string): Promise<void>;
  /** `hcpctl trace`'s document for a correlation or client request ID; undefined when none carries it. */
  trace(id: string): Promise<RequestTrace | undefined>;
  sessions(): SessionRow[];
  requestSession(actor: string, form: Record<string, string>): Promise<string>;
  decideSession(actor: string, name: string, decision: "Approved" | "Denied"): Promise<void>;
  revokeSession(actor: string, name: string): Promise<void>;
  cordon(actor: string, managementCluster: string, cordoned: boolean): Promise<void>;
}

export interface AuditLine {
  audit: "portal";
  who: string;
  roles: PortalRole[];
  action: PortalAction;
  target: ActionTarget;
  result: "ok" | "forbidden" | "error";
  error?: string;
}

export interface PortalAppOptions {
  key: Buffer;
  /** scheme://host[:port] the browser uses; a POST from any other Origin is refused. */
  publicOrigin: string;
  roleMap: Map<string, PortalRole[]>;
  backend: PortalBackend;
  audit: (line: AuditLine) => void;
  /** /login and /callback (signin.ts), served before a session is asked for. */
  signIn?: Hono;
  now?: () => number;
}

interface Caller {
  session: PortalSession;
  roles: PortalRole[];
}

type Env = { Variables: { caller: Caller } };

const STYLESHEET = readFileSync(new URL("./portal.css", import.meta.url), "utf8");

export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'none'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
};

export function portalApp(opts: PortalAppOptions): Hono<Env> {
  const now = opts.now ?? Date.now;
  const app = new Hono<Env>();
  // same-origin, not the default no-referrer: under no-referrer Chromium sends "Origin: null" on a form POST.
  app.use(secureHeaders({ contentSecurityPolicy: CONTENT_SECURITY_POLICY, referrerPolicy: "same-origin" }));
  app.get("/healthz", (c) => c.text("ok"));
  app.get("/static/portal.css", (c) => c.body(STYLESHEET, 200, { "content-type": "text/css" }));
  if (opts.signIn) app.route("/", opts.signIn);

  app.use(async (c, next) => {
    const session = openSession(opts.key, getCookie(c, SESSION_COOKIE), now());
    if (!session) {
      return c.req.method === "GET" ? c.redirect("/login") : c.text("sign in first", 401);
    }
    c.set("caller", { session, roles: rolesOf(session.groups, opts.roleMap) });
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      if (!originValid(c.req.header("origin"), opts.publicOrigin)) {
        return c.text("cross-origin request refused", 403);
      }
      const body = await c.req.parseBody();
      if (!csrfValid(opts.key, session.id, body.csrf)) {
        return c.text("missing or wrong CSRF token", 403);
      }
    }
    await next();
  });

  app.post("/logout", (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: "/", secure: true });
    return c.redirect("/login", 303);
  });

  app.get("/", (c) => {
    const { session, roles } = c.get("caller");
    const token = csrfToken(opts.key, session.id);
    const canCordon = allowed(roles, "managementcluster.cordon");
    const rows = opts.backend.managementClusters().map(
      (mc) =>
        html`<tr>
          <td>${mc.name}</td>
          <td>${mc.phase}</td>
          <td>${mc.hostedClusters} / ${mc.capacity}</td>
          <td>${mc.connected ? "connected" : "not connected"}</td>
          <td>${mc.cordoned ? "cordoned" : "schedulable"}</td>
          <td>
            ${
              canCordon
                ? html`<form
                    method="post"
                    action="/managementclusters/${mc.name}/${mc.cordoned ? "uncordon" : "cordon"}"
                  >
                    <input type="hidden" name="csrf" value="${token}" />
                    <button>${mc.cordoned ? "Uncordon" : "Cordon"}</button>
                  </form>`
                : ""
            }
          </td>
        </tr>`,
    );
    return c.html(
      page(
        "Region",
        session,
        token,
        html`<table>
          <caption>
            Management clusters
          </caption>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Phase</th>
            <th scope="col">Load / capacity</th>
            <th scope="col">Agent</th>
            <th scope="col">Placement</th>
            <th scope="col">Action</th>
          </tr>
          ${rows}
        </table>`,
      ),
    );
  });

  app.get("/clusters", (c) => {
    const { session } = c.get("caller");
    const query = parseClusterQuery(c.req.query());
    const result = clusterPage(opts.backend.clusters(), query);
    return c.html(page("Clusters", session, csrfToken(opts.key, session.id), clustersPage(result, query)));
  });

  app.get("/clusters/:namespace/:name", async (c) => {
    const { session, roles } = c.get("caller");
    const namespace = c.req.param("namespace");
    const name = c.req.param("name");
    const view = await opts.backend.cluster(namespace, name);
    if (!view) return c.text(`no HcpCluster ${namespace}/${name}`, 404);
    const token = csrfToken(opts.key, session.id);
    const form = allowed(roles, "session.request") ? sessionRequestForm(token, { namespace, name }) : "";
    const retry =
      view.failed && allowed(roles, "operation.retry")
        ? retryForm(`/clusters/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/retry`, token)
        : "";
    return c.html(
      page(
        `${namespace}/${name}`,
        session,
        token,
        clusterPageBody(
          view.tree,
          view.stale,
          html`${retry}${operationsSection(view.operations)}${eventsSection(view.events)}${form}`,
        ),
      ),
    );
  });

  app.get("/trace", async (c) => {
    const { session } = c.get("caller");
    const id = (c.req.query("id") ?? "").trim();
    if (id.length > 200) return c.text("id: a request ID is at most 200 characters", 400);
    const trace = id ? await opts.backend.trace(id) : undefined;
    return c.html(
      page("Trace an ARM request", session, csrfToken(opts.key, session.id), tracePageBody(id, trace)),
    );
  });

  app.get("/sessions", (c) => {
    const { session, roles } = c.get("caller");
    const token = csrfToken(opts.key, session.id);
    const may = {
      request: allowed(roles, "session.request"),
      decide: allowed(roles, "session.decide"),
      revoke: allowed(roles, "session.revoke"),
    };
    return c.html(
      page("Sessions", session, token, sessionsPage(opts.backend.sessions(), session.name, token, may)),
    );
  });

  const act = (
    action: PortalAction,
    target: (c: Context<Env>) => ActionTarget,
    run: (actor: string, c: Context<Env>) => Promise<string | void>,
    back?: (c: Context<Env>) => string,
  ) => {
    return async (c: Context<Env>) => {
      const { session, roles } = c.get("caller");
      const base = { audit: "portal" as const, who: session.name, roles, action, target: target(c) };
      if (!allowed(roles, action)) {
        opts.audit({ ...base, result: "forbidden" });
        return c.text(`${action}: your roles (${roles.join(", ") || "none"}) do not allow it`, 403);
      }
      try {
        await run(session.name, c);
        opts.audit({ ...base, result: "ok" });
        // Each action knows the page it came from: the redirect does not depend on a Referer.
        return c.redirect(back?.(c) ?? (action.startsWith("session.") ? "/sessions" : "/"), 303);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        opts.audit({ ...base, result: "error", error: message });
        return c.text(`${action}: ${message}`, 400);
      }
    };
  };

  const mc = (c: Context<Env>): ActionTarget => ({
    kind: "ManagementCluster",
    name: c.req.param("name") ?? "",
  });
  const as = (c: Context<Env>): ActionTarget => ({ kind: "AccessSession", name: c.req.param("name") ?? "" });
  app.post(
    "/managementclusters/:name/cordon",
    act("managementcluster.cordon", mc, (a, c) => opts.backend.cordon(a, mc(c).name, true)),
  );
  app.post(
    "/managementclusters/:name/uncordon",
    act("managementcluster.cordon", mc, (a, c) => opts.backend.cordon(a, mc(c).name, false)),
  );
  const hc = (c: Context<Env>): ActionTarget => ({
    kind: "HcpCluster",
    name: `${c.req.param("namespace") ?? ""}/${c.req.param("name") ?? ""}`,
  });
  app.post(
    "/clusters/:namespace/:name/retry",
    act(
      "operation.retry",
      hc,
      (a, c) => opts.backend.retry(a, c.req.param("namespace") ?? "", c.req.param("name") ?? ""),
      (c) =>
        `/clusters/${encodeURIComponent(c.req.param("namespace") ?? "")}/${encodeURIComponent(c.req.param("name") ?? "")}`,
    ),
  );
  app.post(
    "/sessions",
    act(
      "session.request",
      () => ({ kind: "AccessSession", name: "" }),
      async (a, c) => {
        const form = await c.req.parseBody();
        const fields = Object.fromEntries(
          Object.entries(form).filter((e): e is [string, string] => typeof e[1] === "string"),
        );
        return opts.backend.requestSession(a, fields);
      },
    ),
  );
  app.post(
    "/sessions/:name/approve",
    act("session.decide", as, (a, c) => opts.backend.decideSession(a, as(c).name, "Approved")),
  );
  app.post(
    "/sessions/:name/deny",
    act("session.decide", as, (a, c) => opts.backend.decideSession(a, as(c).name, "Denied")),
  );
  app.post(
    "/sessions/:name/revoke",
    act("session.revoke", as, (a, c) => opts.backend.revokeSession(a, as(c).name)),
  );
  return app;
}
