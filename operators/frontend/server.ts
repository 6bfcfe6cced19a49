/**
 * The ARM frontend: an HTTPS server that only ARM may call (mutual TLS against the configured
 * client CA; anything else gets a 401 before routing) and the middleware of ARO HCP's frontend in
 * its order: request IDs and correlation, body limits and media type, routing, resource names,
 * api-version, subscription state, system data. Handlers read and write CRs only.
 */
import { randomUUID } from "node:crypto";
import { STATUS_CODES, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { createServer, type Server } from "node:https";
import type { TLSSocket } from "node:tls";
import type { Registry } from "prom-client";
import type { KubeClient } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import { counter, histogram, metricsRegistry } from "../runtime/metrics.ts";
import type { Runnable } from "../runtime/manager.ts";
import { SUBSCRIPTION_API_VERSION, isServedVersion } from "./api-version-schemas.ts";
import { CloudError, CODES, internalError, type CloudErrorBody } from "./errors.ts";
import { header, type ArmRequest, type Reply } from "./arm-request.ts";
import { getOperationResult, getOperationStatus } from "./operations/endpoints.ts";
import { OperationStore } from "./operations/store.ts";
import { collectUntil } from "./operations/garbage-collection.ts";
import type { AzureClients } from "../azure/clients.ts";
import { AzureChecks } from "./azure-checks.ts";
import { preflight } from "./preflight.ts";
import { resourceIdFromPath, type ResourceId } from "./resource-id.ts";
import { ResourceHandlers } from "./resource-handlers.ts";
import { badEncoding, match, PATTERNS, route, type Handler, type Route } from "./routes.ts";
import { checkCarriedHeaders, readSystemData } from "./request-headers.ts";
import { parseRequestBody } from "./request-body.ts";
import { adoptSettings } from "./adopt-settings.ts";
import {
  checkSubscriptionState,
  getSubscription,
  putSubscription,
  SubscriptionStore,
} from "./subscriptions.ts";
import { CatalogReader, getVersions } from "./openshift-versions.ts";
import { getRoleSets } from "./operator-identities.ts";
import { listProviderOperations } from "./provider-operations.ts";
import { resolveDeadlines, type OperationDeadlines } from "./operations/deadlines.ts";
import { resolveNotificationOptions } from "./operations/notification-uri.ts";

/**
 * The largest request body read: below the service API server's 3 MiB request limit (and etcd's
 * 1.5 MiB object limit), so that a body too large to store is refused here, naming the limit.
 */
export const MAX_BODY_BYTES = 1024 * 1024;
/** The route label of requests no route matches (real 404s); see `#routeLabel`. */
export const UNMATCHED_ROUTE = "unmatched";
const SPECIAL_PATHS = ["/healthz", "/metrics"];

/** Bounds on slow and numerous clients; a connection past one is closed. */
export interface ConnectionLimits {
  /** To finish the TLS handshake. */
  handshakeTimeoutMs: number;
  /** To send a request's headers. */
  headersTimeoutMs: number;
  /** To send a whole request, body included (a slow body is cut off with 408). */
  requestTimeoutMs: number;
  /** Without traffic on a connection, between requests or within one. */
  idleTimeoutMs: number;
  /** Open connections; more are closed as they arrive. */
  maxConnections: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  handshakeTimeoutMs: 10_000,
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 60_000,
  idleTimeoutMs: 30_000,
  maxConnections: 2_000,
};

export interface FrontendOptions {
  client: KubeClient;
  /** PEM: serving certificate and key, and the CA that signs ARM's client certificates. */
  tls: { cert: string | Buffer; key: string | Buffer; clientCA: string | Buffer };
  /** Default 0.0.0.0. */
  host?: string;
  /** Default 8443; 0 picks a free port. */
  port?: number;
  /** Namespace of the release catalog ConfigMap. Default hcp-system. */
  catalogNamespace?: string;
  /** Items per LIST page. Default 100. */
  pageSize?: number;
  log?: Logger;
  registry?: Registry;
  /** Default DEFAULT_CONNECTION_LIMITS. */
  connections?: Partial<ConnectionLimits>;
  /** How long each class of operation may run before it ends Failed. Default DEFAULT_DEADLINES. */
  deadlines?: Partial<OperationDeadlines>;
  /**
   * Hosts an Azure-AsyncNotificationUri may name; a request naming another is refused. Default
   * DEFAULT_NOTIFICATION_HOSTS. The OperationNotifier (notifier.ts) sends the notifications.
   */
  notificationHosts?: string[];
  /**
   * Azure, where a create's customer resources are checked first (azure-checks.ts): identities,
   * their roles, the KMS key, VM sizes, vCPU quota. Without it nothing is checked in Azure.
   */
  azure?: AzureClients;
}

function requestMetrics(registry: Registry) {
  return {
    requests: counter(registry, {
      name: "hcp_frontend_requests_total",
      help: "ARM requests by method, route and status code",
      labelNames: ["method", "route", "code"] as const,
    }),
    duration: histogram(registry, {
      name: "hcp_frontend_request_duration_seconds",
      help: "ARM request latency by method and route",
      labelNames: ["method", "route"] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    }),
  };
}

function bodyTooLarge(limit: number, size: number): CloudError {
  return new CloudError(413, {
    code: CODES.InvalidResource,
    message: `The resource definition is invalid: the request body is ${size} bytes, more than the limit of ${limit} bytes (${limit / 1024 / 1024} MiB).`,
  });
}

/**
 * Reads the body, refusing more than `limit` bytes: at once when Content-Length says so (Node
 * discards the unread rest), else once the count passes it (the rest is drained, not kept; the
 * request timeout bounds how long).
 */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > limit) throw bodyTooLarge(limit, declared);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  if (size > limit) throw bodyTooLarge(limit, size);
  return Buffer.concat(chunks);
}

/** The request URL; one Node cannot parse is the caller's error. */
function urlOf(req: IncomingMessage): URL {
  const url = URL.parse(req.url ?? "/", "https://frontend");
  if (!url)
    throw new CloudError(400, {
      code: CODES.InvalidParameter,
      message: `The request URL '${(req.url ?? "").slice(0, 100)}' could not be parsed.`,
    });
  return url;
}

/** Scheme and host for links: the Referer ARM sends, else this request's own. */
function baseOf(req: IncomingMessage): string {
  const referer = req.headers.referer;
  if (referer && URL.canParse(referer)) return new URL(referer).origin;
  const proto = header(req, "x-forwarded-proto") ?? "https";
  return `${proto}://${req.headers.host ?? "localhost"}`;
}

function checkApiVersion(r: Route, version: string | null, resourceType: string): void {
  if (r.apiVersion === "none") return;
  if (version === null || version === "")
    throw new CloudError(400, {
      code: CODES.InvalidParameter,
      message: "The request is missing required parameter 'api-version'.",
      target: "api-version",
    });
  const ok =
    r.apiVersion === "subscription" ? version === SUBSCRIPTION_API_VERSION : isServedVersion(version);
  if (!ok)
    throw new CloudError(400, {
      code: CODES.InvalidResourceType,
      message: `The resource type '${resourceType}' could not be found API version '${version.slice(0, 100)}'.`,
    });
}

const typeOfRoute = (r: Route): string =>
  r.name.includes("nodePools")
    ? "nodePools"
    : r.name.includes("externalAuths")
      ? "externalAuths"
      : r.name.includes("hcpOperation")
        ? "hcpOperationStatuses"
        : r.name.includes("Versions")
          ? "locations/hcpOpenShiftVersions"
          : r.name.includes("RoleSets")
            ? "locations/hcpOperatorIdentityRoleSets"
            : "hcpOpenShiftClusters";

/** What `handle` knows of a request before the middleware runs. */
interface IncomingRequest {
  method: string;
  url: URL;
  /** The request's headers, those carried onto resources checked (request-headers.ts). */
  headers: IncomingHttpHeaders;
  /** The first carried header that failed its check. */
  refusal?: CloudError;
  requestId: string;
  correlationRequestId: string | undefined;
  clientRequestId: string | undefined;
  /** Carries the request, correlation and client request IDs. */
  log: Logger;
}

/**
 * What Node's HTTP parser refuses before a request reaches the router (a lowercase or unknown
 * method, a malformed request line or header, headers too large, a request too slow), answered
 * as a CloudError like everything else, with the status Node itself would give.
 */
function clientErrorOf(err: NodeJS.ErrnoException): CloudError {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT")
    return new CloudError(408, {
      code: CODES.RequestTimeout,
      message: "The request did not arrive in time.",
    });
  if (err.code === "HPE_HEADER_OVERFLOW")
    return new CloudError(431, {
      code: CODES.RequestHeaderFieldsTooLarge,
      message: "The request's headers are too large.",
    });
  return new CloudError(400, {
    code: CODES.BadRequest,
    message: `The request is not valid HTTP/1.1 (${err.code ?? "unknown"}).`,
  });
}

/** Whether the error is about an HTTP request (rather than the TLS handshake or the connection). */
const isRequestError = (err: NodeJS.ErrnoException): boolean =>
  err.code === "ERR_HTTP_REQUEST_TIMEOUT" || err.code?.startsWith("HPE_") === true;

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // Answered already: the parser reports the rest of a bad request too, and the answer must
  // reach the client before the connection closes (destroying it now would reset it).
  if (!socket.writable) return;
  // A failed handshake or a reset has no request to answer; a connection already carrying a
  // response cannot take another. With a clientError listener, closing them is ours to do.
  if (!isRequestError(err) || (socket as Partial<Socket>).bytesWritten) {
    socket.destroy();
    return;
  }
  const e = clientErrorOf(err);
  const body = JSON.stringify({ error: e.body });
  // What the client still sends is read and dropped: closing with it unread would reset the
  // connection, and the client would see the reset instead of this answer.
  socket.resume();
  socket.end(
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? ""}\r\n` +
      `Content-Type: application/json\r\nX-Ms-Error-Code: ${e.body.code}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function errorReply(err: unknown): Reply {
  const e = err instanceof CloudError ? err : internalError();
  const body: { error: CloudErrorBody } = { error: e.body };
  return { status: e.status, body, headers: { "x-ms-error-code": e.body.code, ...e.headers } };
}

interface RequestLogValues {
  method: string;
  route: string;
  url: string | undefined;
  status: number;
  seconds: number;
  /** What was thrown, for a failed request. */
  err: unknown;
}

/** Every request at debug; every 5xx as an error with its cause, so that none leaves no trace. */
function logRequest(log: Logger, values: RequestLogValues): void {
  const { url, seconds, err, ...rest } = values;
  const entry = {
    ...rest,
    path: url?.split("?")[0]?.slice(0, 500),
    durationMs: Math.round(seconds * 1000),
  };
  if (values.status >= 500) log.error("ARM request failed", err, entry);
  else log.debug("ARM request", entry);
}

export class Frontend implements Runnable {
  readonly needLeaderElection = false;
  readonly #opts: FrontendOptions;
  readonly #log: Logger;
  readonly #client: KubeClient;
  readonly #operations: OperationStore;
  readonly #subscriptions: SubscriptionStore;
  readonly #resources: ResourceHandlers;
  readonly #catalog: CatalogReader;
  readonly #azure: AzureChecks | undefined;
  #watches: AbortController | undefined;
  readonly #routes: Route[];
  readonly #registry: Registry;
  readonly #metrics: ReturnType<typeof requestMetrics>;
  #server: Server | undefined;
  /** Settles once clusters' settings from before their spec fields are in their specs (adopt-settings.ts). */
  adopted: Promise<number> = Promise.resolve(0);

  constructor(opts: FrontendOptions) {
    this.#opts = opts;
    this.#log = opts.log ?? silentLogger;
    this.#client = opts.client;
    this.#operations = new OperationStore(opts.client);
    this.#subscriptions = new SubscriptionStore(opts.client);
    this.#catalog = new CatalogReader(opts.client, opts.catalogNamespace ?? "hcp-system");
    this.#azure = opts.azure ? new AzureChecks({ clients: opts.azure, log: this.#log }) : undefined;
    this.#resources = new ResourceHandlers({
      client: opts.client,
      operations: this.#operations,
      catalog: this.#catalog,
      pageSize: opts.pageSize ?? 100,
      deadlines: resolveDeadlines(opts.deadlines),
      notificationHosts: resolveNotificationOptions({
        ...(opts.notificationHosts ? { allowedHosts: opts.notificationHosts } : {}),
      }).allowedHosts,
      log: this.#log,
      ...(this.#azure ? { azure: this.#azure } : {}),
    });
    this.#registry = opts.registry ?? metricsRegistry;
    this.#metrics = requestMetrics(this.#registry);
    this.#routes = this.#table();
  }

  #table(): Route[] {
    const res = this.#resources;
    const id = (req: ArmRequest): ResourceId => {
      const found = resourceIdFromPath(req.params);
      if (!found) throw internalError(); // only routes with a cluster in their path use it
      return found;
    };
    const scope = (req: ArmRequest) => ({
      subscriptionId: req.params["subscriptionId"] ?? "",
      resourceGroup: req.params["resourceGroup"] ?? "",
      ...(req.params["cluster"] ? { cluster: req.params["cluster"] } : {}),
    });
    const crud: Partial<Record<string, Handler>> = {
      GET: (r) => res.get(r, id(r)),
      PUT: (r) => res.put(r, id(r)),
      PATCH: (r) => res.patch(r, id(r)),
      DELETE: (r) => res.delete(r, id(r)),
    };
    const ops = { client: this.#client, operations: this.#operations };
    const subs = { ...ops, subscriptions: this.#subscriptions };
    return [
      route({
        pattern: PATTERNS.subscription,
        apiVersion: "subscription",
        checkSubscription: false,
        methods: { PUT: (r) => putSubscription(subs, r), GET: (r) => getSubscription(subs, r) },
      }),
      route({
        pattern: PATTERNS.clustersInSubscription,
        methods: { GET: (r) => res.list(r, "cluster", scope(r)) },
      }),
      route({ pattern: PATTERNS.operationStatus, methods: { GET: (r) => getOperationStatus(ops, r) } }),
      route({ pattern: PATTERNS.operationResult, methods: { GET: (r) => getOperationResult(ops, r) } }),
      route({ pattern: PATTERNS.versions, methods: { GET: (r) => getVersions(this.#catalog, r) } }),
      route({ pattern: PATTERNS.version, methods: { GET: (r) => getVersions(this.#catalog, r) } }),
      route({ pattern: PATTERNS.roleSets, methods: { GET: (r) => getRoleSets(this.#catalog, r) } }),
      route({ pattern: PATTERNS.roleSet, methods: { GET: (r) => getRoleSets(this.#catalog, r) } }),
      // Tenant-wide, and the same whatever the api-version (ARM asks with any of the provider's).
      route({
        pattern: PATTERNS.providerOperations,
        apiVersion: "none",
        checkSubscription: false,
        methods: { GET: () => listProviderOperations() },
      }),
      route({ pattern: PATTERNS.clusters, methods: { GET: (r) => res.list(r, "cluster", scope(r)) } }),
      route({ pattern: PATTERNS.cluster, methods: crud }),
      route({
        pattern: PATTERNS.requestAdminCredential,
        methods: { POST: (r) => res.requestAdminCredential(r, id(r)) },
      }),
      route({
        pattern: PATTERNS.revokeCredentials,
        methods: { POST: (r) => res.revokeCredentials(r, id(r)) },
      }),
      route({ pattern: PATTERNS.nodePools, methods: { GET: (r) => res.list(r, "nodePool", scope(r)) } }),
      route({ pattern: PATTERNS.nodePool, methods: crud }),
      route({
        pattern: PATTERNS.externalAuths,
        methods: { GET: (r) => res.list(r, "externalAuth", scope(r)) },
      }),
      route({ pattern: PATTERNS.externalAuth, methods: crud }),
      route({
        pattern: PATTERNS.preflight,
        apiVersion: "none",
        methods: { POST: (r) => preflight(this.#client, r, this.#azure) },
      }),
    ];
  }

  /** The route's template for metrics and logs: a special path, a route, or UNMATCHED_ROUTE. */
  #routeLabel(path: string | undefined): string {
    if (path === undefined) return UNMATCHED_ROUTE;
    if (SPECIAL_PATHS.includes(path)) return path;
    return match(this.#routes, path)?.route.name ?? UNMATCHED_ROUTE;
  }

  /** Runs the middleware and the handler; every failure becomes a CloudError reply. */
  async #dispatch(req: IncomingMessage, base: ArmRequest, url: URL): Promise<Reply> {
    const raw = await readBody(req, MAX_BODY_BYTES);
    const body = parseRequestBody(base.method, req.headers["content-type"], raw);
    const found = match(this.#routes, url.pathname);
    if (!found)
      throw new CloudError(404, {
        code: CODES.NotFound,
        message: `The requested path '${url.pathname.slice(0, 500)}' was not found.`,
      });
    const { route: r, params } = found;
    if (found.malformed !== undefined) throw badEncoding(found.malformed);
    const handler = r.methods[base.method];
    if (!handler)
      throw new CloudError(405, {
        code: CODES.MethodNotAllowed,
        message: `The method '${base.method}' is not allowed here.`,
      });
    resourceIdFromPath(params);
    const version = url.searchParams.get("api-version");
    checkApiVersion(r, version, `${"Microsoft.RedHatOpenShift"}/${typeOfRoute(r)}`);
    const armReq: ArmRequest = { ...base, path: url.pathname, query: url.searchParams, params, body };
    // Routes that serve no resource version (subscription, preflight) do not read it.
    if (version !== null && isServedVersion(version)) armReq.apiVersion = version;
    if (r.checkSubscription) {
      const sub = params["subscriptionId"] ?? "";
      armReq.subscription = checkSubscriptionState(sub, await this.#subscriptions.get(sub), base.method);
    }
    return handler(armReq);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = (req.method ?? "GET").toUpperCase();
    const requestId = randomUUID();
    // Only carried headers that passed their check are echoed, logged or kept.
    const checked = checkCarriedHeaders(req.headers);
    const carried = { headers: checked.headers };
    const correlationRequestId = header(carried, "x-ms-correlation-request-id");
    const clientRequestId = header(carried, "x-ms-client-request-id");
    const headers: Record<string, string> = { "x-ms-request-id": requestId };
    if (correlationRequestId) headers["x-ms-correlation-request-id"] = correlationRequestId;
    if (clientRequestId && header(req, "x-ms-return-client-request-id")?.toLowerCase() === "true")
      headers["x-ms-client-request-id"] = clientRequestId;
    const log = this.#log.child({ requestId, correlationRequestId, clientRequestId });
    let route = UNMATCHED_ROUTE;
    let reply: Reply;
    let failure: unknown;
    try {
      const url = urlOf(req);
      route = this.#routeLabel(url.pathname);
      reply = await this.#serve(req, {
        method,
        url,
        ...checked,
        requestId,
        correlationRequestId,
        clientRequestId,
        log,
      });
    } catch (err) {
      failure = err;
      reply = errorReply(err);
    }
    this.#write(res, reply, headers);
    const seconds = (performance.now() - started) / 1000;
    this.#metrics.requests.inc({ method, route, code: String(reply.status) });
    this.#metrics.duration.observe({ method, route }, seconds);
    logRequest(log, { method, route, url: req.url, status: reply.status, seconds, err: failure });
  }

  /** Authentication, then the special paths or the ARM routes. */
  async #serve(req: IncomingMessage, r: IncomingRequest): Promise<Reply> {
    if (!(req.socket as TLSSocket).authorized)
      throw new CloudError(401, {
        code: CODES.Unauthorized,
        message: "A client certificate signed by the configured ARM client CA is required.",
      });
    const special = await this.#special(r.method, r.url.pathname);
    if (special) return special;
    if (r.refusal) throw r.refusal;
    const systemData = readSystemData(r.headers);
    const base: ArmRequest = {
      method: r.method,
      path: "",
      query: new URLSearchParams(),
      params: {},
      headers: r.headers,
      body: undefined,
      apiVersion: "2026-06-30-preview",
      base: baseOf(req),
      requestId: r.requestId,
      ...(r.correlationRequestId ? { correlationRequestId: r.correlationRequestId } : {}),
      ...(r.clientRequestId ? { clientRequestId: r.clientRequestId } : {}),
      ...(systemData ? { systemData } : {}),
      log: r.log,
    };
    return this.#dispatch(req, base, r.url);
  }

  async #special(method: string, path: string): Promise<Reply | undefined> {
    if (method !== "GET") return undefined;
    if (path === "/healthz") return { status: 200, body: "ok" };
    if (path === "/metrics")
      return {
        status: 200,
        body: await this.#registry.metrics(),
        headers: { "content-type": this.#registry.contentType },
      };
    return undefined;
  }

  #write(res: ServerResponse, reply: Reply, base: Record<string, string>): void {
    const headers: Record<string, string> = { ...base, ...reply.headers };
    let payload: string | undefined;
    if (reply.body !== undefined) {
      payload = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
      headers["content-type"] ??= typeof reply.body === "string" ? "text/plain" : "application/json";
    }
    res.writeHead(reply.status, headers);
    res.end(payload);
  }

  /**
   * Starts the watches (subscriptions, catalog) and listening; resolves with the bound port. Until
   * a watch has synced its reads go to the API server directly.
   */
  async listen(): Promise<number> {
    const { tls } = this.#opts;
    const watches = new AbortController();
    this.#watches = watches;
    for (const informer of [this.#subscriptions.informer, this.#catalog.informer])
      void informer.run(watches.signal).catch((err: unknown) => this.#log.error("A watch stopped", err));
    const limits = { ...DEFAULT_CONNECTION_LIMITS, ...this.#opts.connections };
    const server = createServer(
      {
        cert: tls.cert,
        key: tls.key,
        ca: tls.clientCA,
        requestCert: true,
        rejectUnauthorized: false,
        handshakeTimeout: limits.handshakeTimeoutMs,
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.idleTimeoutMs,
        // How often the header and request timeouts are checked: often enough to keep them.
        connectionsCheckingInterval: Math.max(
          10,
          Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
        ),
      },
      (req, res) => void this.handle(req, res),
    );
    server.maxConnections = limits.maxConnections;
    server.setTimeout(limits.idleTimeoutMs);
    server.on("tlsClientError", (err) => this.#log.debug("A TLS connection failed", { err: err.message }));
    server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
      this.#log.debug("A request was not valid HTTP", { err: err.message, code: err.code });
      answerClientError(err, socket);
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.#opts.port ?? 8443, this.#opts.host ?? "0.0.0.0", () => resolve());
    });
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    this.#log.info("ARM frontend listening", { port });
    this.adopted = adoptSettings(this.#client, this.#log).catch((err: unknown) => {
      this.#log.error("Moving clusters' settings into their specs failed", err);
      return 0;
    });
    return port;
  }

  async close(): Promise<void> {
    this.#watches?.abort();
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Runnable: serves until the signal aborts, removing expired operation documents hourly. */
  async start(signal: AbortSignal): Promise<void> {
    await this.listen();
    await collectUntil(this.#client, this.#log, signal);
    await this.close();
  }
}
