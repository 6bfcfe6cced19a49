/**
 * The session gate's request path (issue 36; the model is ARO HCP's session gate): serves
 * /sessions/{name}/kas/* to the session's owner only, forwards to the hosted cluster's apiserver
 * with the session's client certificate, and cuts every request and stream of a session the
 * moment it stops being usable (expiry, revocation, deletion). Every replica runs one.
 */
import { STATUS_CODES, type IncomingMessage, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Duplex } from "node:stream";
import { sessionUsable, type AccessSession } from "../api/v1alpha1/accesssession.ts";
import type { Logger } from "../runtime/logger.ts";
import { UpstreamCache, type SessionUpstream } from "./upstream.ts";
import type { GateMetrics } from "./metrics.ts";

/** Who the bearer token says the caller is, or why it says nothing (a 401). */
export type Authenticate = (
  authorization: string | undefined,
) => Promise<{ user: string } | { error: string }>;

/** The gate's view of the cluster: its informers' caches. */
export interface GateSources {
  session(name: string): AccessSession | undefined;
  /** The credential Secret's kubeconfig and resourceVersion, or undefined if not (yet) cached. */
  credential(secret: string): { resourceVersion: string; kubeconfig: string } | undefined;
}

export interface SessionGateOptions {
  authenticate: Authenticate;
  sources: GateSources;
  log: Logger;
  metrics: GateMetrics;
  now?: () => number;
}

const PATH = /^\/sessions\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\/kas(\/.*)?$/;
const READ_METHODS = new Set(["GET", "HEAD"]);
/** Hop-by-hop headers (RFC 9110 §7.6.1) and what must not pass the gate. */
const DROPPED = new Set([
  "authorization",
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

export type CutReason =
  "Expired" | "Revoked" | "Deleting" | "Denied" | "NotApproved" | "CredentialPending" | "Shutdown";

/** Where the answer goes: a response, or the raw socket of an upgrade request. */
type Client = { res: ServerResponse } | { socket: Duplex; head: Buffer };

/** metav1.StatusReason by HTTP status, for the refusals the gate makes. */
const STATUS_REASONS: Record<number, string> = {
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  502: "InternalError",
};

/** A refusal as a Kubernetes Status, on a response or an upgrade's raw socket. */
function writeRefusal(to: Client, status: number, message: string, headers: Record<string, string>): void {
  // With a reason, as the apiserver writes it: kubectl prints the message of a Status only then.
  const body = JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: STATUS_REASONS[status] ?? "Unknown",
    code: status,
  });
  const all = { "content-type": "application/json", ...headers };
  if ("res" in to) {
    to.res.writeHead(status, all).end(body);
    return;
  }
  const head = Object.entries({
    ...all,
    connection: "close",
    "content-length": String(Buffer.byteLength(body)),
  })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  to.socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n${head}\r\n${body}`);
}

interface Tracked {
  cut(reason: CutReason): void;
}

interface Audit {
  who?: string;
  session?: string;
  cluster?: string;
  level?: string;
  verb?: string;
  method: string;
  path: string;
  status: number;
  bytes: number;
  started: number;
  error?: string;
}

const WRITE_VERBS: Record<string, string> = {
  POST: "create",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

/** get or list of a resource path: /api/{v}/... or /apis/{g}/{v}/..., then [namespaces/{ns}/]{resource}[/{name}[/...]]. */
function readVerb(path: string): "get" | "list" {
  const parts = path.split("/").filter(Boolean);
  const rest = parts[0] === "api" ? parts.slice(2) : parts[0] === "apis" ? parts.slice(3) : [];
  const resource = rest[0] === "namespaces" && rest.length > 2 ? rest.slice(2) : rest;
  return resource.length === 1 ? "list" : "get";
}

/** Kubernetes' verb for a request (its resource path and query), for audit. */
export function verbOf(method: string, path: string, query: URLSearchParams): string {
  if (method !== "GET" && method !== "HEAD") return WRITE_VERBS[method] ?? method.toLowerCase();
  const watch = query.get("watch");
  return watch === "true" || watch === "1" ? "watch" : readVerb(path);
}

/** The headers forwarded upstream: no credentials, no hop-by-hop, no impersonation. */
export function forwardedHeaders(
  headers: IncomingHttpHeaders,
  upgrade: boolean,
): Record<string, string | string[]> {
  const connectionListed = new Set(
    String(headers.connection ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || DROPPED.has(lower) || lower.startsWith("impersonate-")) continue;
    if (connectionListed.has(lower) && lower !== "upgrade") continue;
    out[lower] = value;
  }
  if (upgrade && headers.upgrade) {
    out.connection = "Upgrade";
    out.upgrade = headers.upgrade;
  }
  return out;
}

export class SessionGate {
  readonly #opts: SessionGateOptions;
  readonly #now: () => number;
  readonly #upstreams = new UpstreamCache();
  readonly #inFlight = new Map<string, Set<Tracked>>();
  readonly #expiryTimers = new Map<string, NodeJS.Timeout>();

  constructor(opts: SessionGateOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** How many requests and streams are open for a session (tests and metrics). */
  open(session: string): number {
    return this.#inFlight.get(session)?.size ?? 0;
  }

  /** The informer saw the session change or go: cut its traffic if it is no longer usable. */
  sessionChanged(name: string): void {
    const session = this.#opts.sources.session(name);
    const verdict = session
      ? sessionUsable(session, this.#now())
      : { usable: false as const, why: "Deleting" as const };
    if (verdict.usable) {
      this.#armExpiry(name, verdict.expiresAt);
      return;
    }
    this.#cutAll(name, verdict.why);
  }

  /** Cuts everything (the server is stopping). */
  close(): void {
    for (const name of [...this.#inFlight.keys()]) this.#cutAll(name, "Shutdown");
    this.#upstreams.close();
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    void this.#serve(req, { res });
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    void this.#serve(req, { socket, head });
  }

  async #serve(req: IncomingMessage, to: Client): Promise<void> {
    const url = new URL(req.url ?? "/", "https://gate.invalid");
    const method = (req.method ?? "GET").toUpperCase();
    const audit: Audit = { method, path: url.pathname, status: 0, bytes: 0, started: this.#now() };
    const refuse = (status: number, message: string, headers: Record<string, string> = {}): void => {
      audit.status = status;
      audit.error = message;
      writeRefusal(to, status, message, headers);
      this.#audit(audit);
    };
    const match = PATH.exec(url.pathname);
    if (!match)
      return refuse(404, `no such path: the gate serves /sessions/{name}/kas/*, not ${url.pathname}`);
    const name = match[1]!;
    audit.session = name;
    const upstreamPath = match[3] ?? "/";
    audit.verb = verbOf(method, upstreamPath, url.searchParams);

    const who = await this.#opts.authenticate(req.headers.authorization);
    if ("error" in who)
      return refuse(401, who.error, {
        "www-authenticate": `Bearer realm="sessiongate", error="invalid_token"`,
      });
    audit.who = who.user;
    const allowed = this.#authorize(name, { user: who.user, method, upgrade: "socket" in to }, audit);
    if ("refused" in allowed) return refuse(allowed.refused, allowed.message);
    this.#armExpiry(name, allowed.expiresAt);
    this.#forward(
      req,
      to,
      { upstream: allowed.upstream, path: upstreamPath + url.search, session: name },
      audit,
    );
  }

  /** The session's rules for this user and request, and the way upstream if they allow it. */
  #authorize(
    name: string,
    { user, method, upgrade }: { user: string; method: string; upgrade: boolean },
    audit: Audit,
  ): { upstream: SessionUpstream; expiresAt: number } | { refused: number; message: string } {
    const session = this.#opts.sources.session(name);
    if (!session) return { refused: 403, message: `session ${name} does not exist` };
    audit.cluster = `${session.spec.clusterRef.namespace}/${session.spec.clusterRef.name}`;
    audit.level = session.spec.level;
    if (session.spec.owner !== user)
      return { refused: 403, message: `session ${name} belongs to another user, not ${user}` };
    const verdict = sessionUsable(session, this.#now());
    if (!verdict.usable) return { refused: 403, message: `session ${name} cannot be used: ${verdict.why}` };
    if (session.spec.level === "ReadOnly" && (!READ_METHODS.has(method) || upgrade)) {
      const what = upgrade ? `${method} with an upgrade` : method;
      return { refused: 403, message: `session ${name} is ReadOnly: only get, list and watch, not ${what}` };
    }
    const credential = this.#opts.sources.credential(verdict.credentialSecret);
    if (!credential) return { refused: 403, message: `session ${name} cannot be used: CredentialPending` };
    try {
      const { resourceVersion, kubeconfig } = credential;
      const upstream = this.#upstreams.get(verdict.credentialSecret, resourceVersion, kubeconfig);
      return { upstream, expiresAt: verdict.expiresAt };
    } catch (err) {
      this.#opts.log.error("Reading the session's kubeconfig failed", err, { session: name });
      return { refused: 502, message: `session ${name}'s credential is unusable` };
    }
  }

  #forward(
    req: IncomingMessage,
    to: Client,
    { upstream, path, session }: { upstream: SessionUpstream; path: string; session: string },
    audit: Audit,
  ): void {
    const isUpgrade = "socket" in to;
    const out = httpsRequest({
      protocol: upstream.server.protocol,
      hostname: upstream.server.hostname,
      port: upstream.server.port,
      method: req.method,
      path: upstream.server.pathname.replace(/\/$/, "") + path,
      headers: forwardedHeaders(req.headers, isUpgrade),
      agent: isUpgrade ? false : upstream.agent,
      ...(isUpgrade ? agentTls(upstream.agent) : {}),
    });
    const sockets: Duplex[] = [];
    const tracked: Tracked = {
      cut: (reason) => {
        audit.error = `cut: ${reason}`;
        this.#opts.metrics.streamsCut.inc({ reason });
        out.destroy();
        req.destroy();
        for (const s of sockets) s.destroy();
        if ("res" in to) to.res.destroy();
        // Cut is the end of it: untracked and audited now, not when the sockets' close events come.
        finish();
      },
    };
    this.#track(session, tracked);
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      this.#untrack(session, tracked);
      this.#audit(audit);
    };
    out.on("error", (err) => {
      if (!audit.status && "res" in to && !to.res.headersSent) {
        audit.status = 502;
        to.res
          .writeHead(502, { "content-type": "text/plain" })
          .end(`the hosted apiserver is unreachable: ${err.message}`);
      } else if ("socket" in to) {
        to.socket.destroy();
      }
      finish();
    });
    if ("res" in to) {
      const { res } = to;
      out.on("response", (up) => {
        audit.status = up.statusCode ?? 502;
        res.writeHead(audit.status, forwardedHeaders(up.headers, false));
        res.flushHeaders();
        up.on("data", (chunk: Buffer) => {
          audit.bytes += chunk.length;
        });
        up.pipe(res);
        up.on("error", () => res.destroy());
      });
      res.on("close", () => {
        if (!res.writableFinished) out.destroy();
        finish();
      });
      req.pipe(out);
      return;
    }
    const { socket, head } = to;
    sockets.push(socket);
    socket.on("error", () => out.destroy());
    out.on("upgrade", (up, upSocket, upHead) => {
      audit.status = up.statusCode ?? 101;
      sockets.push(upSocket);
      const lines = [`HTTP/1.1 101 Switching Protocols`];
      for (let i = 0; i < up.rawHeaders.length; i += 2)
        lines.push(`${up.rawHeaders[i]}: ${up.rawHeaders[i + 1]}`);
      socket.write(lines.join("\r\n") + "\r\n\r\n");
      if (upHead.length) socket.write(upHead);
      if (head.length) upSocket.write(head);
      upSocket.on("data", (chunk: Buffer) => {
        audit.bytes += chunk.length;
      });
      upSocket.pipe(socket);
      socket.pipe(upSocket);
      const close = (): void => {
        upSocket.destroy();
        socket.destroy();
        finish();
      };
      upSocket.on("close", close);
      socket.on("close", close);
      upSocket.on("error", close);
    });
    out.on("response", (up) => {
      // The upstream refused the upgrade: relay its answer and close.
      audit.status = up.statusCode ?? 502;
      const lines = [`HTTP/1.1 ${audit.status} ${up.statusMessage ?? ""}`];
      for (let i = 0; i < up.rawHeaders.length; i += 2)
        lines.push(`${up.rawHeaders[i]}: ${up.rawHeaders[i + 1]}`);
      socket.write(lines.join("\r\n") + "\r\nconnection: close\r\n\r\n");
      up.pipe(socket);
      up.on("end", () => {
        socket.end();
        finish();
      });
    });
    req.pipe(out);
    out.end();
  }

  #track(session: string, t: Tracked): void {
    let set = this.#inFlight.get(session);
    if (!set) this.#inFlight.set(session, (set = new Set()));
    set.add(t);
    this.#opts.metrics.inFlight.inc();
  }

  #untrack(session: string, t: Tracked): void {
    const set = this.#inFlight.get(session);
    if (!set?.delete(t)) return;
    this.#opts.metrics.inFlight.dec();
    if (set.size === 0) {
      this.#inFlight.delete(session);
      clearTimeout(this.#expiryTimers.get(session));
      this.#expiryTimers.delete(session);
    }
  }

  #cutAll(session: string, reason: CutReason): void {
    clearTimeout(this.#expiryTimers.get(session));
    this.#expiryTimers.delete(session);
    for (const t of [...(this.#inFlight.get(session) ?? [])]) t.cut(reason);
  }

  /** A timer at the session's expiry, while it has traffic: expiry needs no informer event. */
  #armExpiry(session: string, expiresAt: number): void {
    if (this.#expiryTimers.has(session)) return;
    const delay = Math.max(0, Math.min(expiresAt - this.#now(), 2 ** 31 - 1));
    const timer = setTimeout(() => {
      this.#expiryTimers.delete(session);
      this.sessionChanged(session);
    }, delay);
    timer.unref();
    this.#expiryTimers.set(session, timer);
  }

  #audit(a: Audit): void {
    this.#opts.metrics.requests.inc({ code: String(a.status) });
    this.#opts.log.info("Session gate request", {
      audit: "sessiongate",
      who: a.who,
      session: a.session,
      cluster: a.cluster,
      level: a.level,
      verb: a.verb,
      method: a.method,
      path: a.path,
      status: a.status,
      bytes: a.bytes,
      durationMs: this.#now() - a.started,
      ...(a.error ? { error: a.error } : {}),
    });
  }
}

/** An upgrade gets its own connection; it takes the session Agent's TLS material. */
function agentTls(agent: SessionUpstream["agent"]): Record<string, unknown> {
  const o = agent.options as { ca?: unknown; cert?: unknown; key?: unknown };
  return { ca: o.ca, cert: o.cert, key: o.key };
}
