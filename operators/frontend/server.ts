/**
 * The ARM frontend: an HTTPS server that only ARM may call (mutual TLS against the configured
 * client CA; anything else gets a 401 before routing) and the middleware of ARO HCP's frontend in
 * its order: request IDs and correlation, body limits and media type, routing, resource names,
 * api-version, subscription state, system data. Handlers read and write CRs only.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { TLSSocket } from "node:tls";
import type { Registry } from "prom-client";
import type { KubeClient } from "../runtime/kube.ts";
import { silentLogger, type Logger } from "../runtime/logger.ts";
import { counter, histogram, metricsRegistry } from "../runtime/metrics.ts";
import type { Runnable } from "../runtime/manager.ts";
import { SUBSCRIPTION_API_VERSION, isServedVersion } from "./api-version-schemas.ts";
import { CloudError, CODES, internalError, invalidContent, type CloudErrorBody } from "./errors.ts";
import { header, type ArmRequest, type Reply } from "./arm-request.ts";
import { getOperationResult, getOperationStatus } from "./operation-endpoints.ts";
import { OperationStore } from "./operations.ts";
import { preflight } from "./preflight.ts";
import {
  checkResourceGroup,
  checkResourceName,
  checkSubscriptionId,
  type ResourceId,
} from "./resource-id.ts";
import { ResourceHandlers } from "./resource-handlers.ts";
import { match, PATTERNS, route, type Handler, type Route } from "./routes.ts";
import { isObject } from "./body-schema.ts";
import {
  checkSubscriptionState,
  getSubscription,
  putSubscription,
  SubscriptionStore,
} from "./subscriptions.ts";
import { CatalogReader, getVersions } from "./openshift-versions.ts";

export const MAX_BODY_BYTES = 4 * 1024 * 1024;
const OPERATION_CLEANUP_MS = 3600_000;

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

/** Reads the body, refusing more than MAX_BODY_BYTES (the rest is drained, not kept). */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  if (size > limit)
    throw new CloudError(400, {
      code: CODES.InvalidResource,
      message: "The resource definition is invalid.",
    });
  return Buffer.concat(chunks);
}

function parseBody(method: string, contentType: string | undefined, raw: Buffer): unknown {
  if (!["PUT", "PATCH", "POST"].includes(method)) return undefined;
  const media = contentType?.split(";")[0]?.trim().toLowerCase();
  if ((raw.length > 0 || media) && media !== "application/json")
    throw new CloudError(415, {
      code: CODES.UnsupportedMediaType,
      message: `The content media type '${contentType ?? ""}' is not supported. Only 'application/json' is supported.`,
    });
  if (raw.length === 0) return undefined;
  try {
    const body: unknown = JSON.parse(raw.toString("utf8"));
    return body;
  } catch (err) {
    throw invalidContent(err instanceof Error ? err.message : String(err));
  }
}

function systemDataOf(req: IncomingMessage): Record<string, unknown> | undefined {
  const raw = req.headers["x-ms-arm-resource-system-data"];
  if (typeof raw !== "string" || raw === "") return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    if (!isObject(v)) return undefined;
    return { ...v, createdAt: v["createdAt"] ?? new Date().toISOString() };
  } catch {
    return undefined;
  }
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
      message: `The resource type '${resourceType}' could not be found API version '${version}'.`,
    });
}

/** Validates the names in the path (B.1 patterns) and returns the resource they identify, if any. */
function resourceIdOf(params: Record<string, string>): ResourceId | undefined {
  const { subscriptionId, resourceGroup, cluster, nodePool } = params;
  if (subscriptionId !== undefined) checkSubscriptionId(subscriptionId);
  if (resourceGroup !== undefined) checkResourceGroup(resourceGroup);
  if (cluster !== undefined) checkResourceName("cluster", cluster);
  if (nodePool !== undefined) checkResourceName("nodePool", nodePool);
  if (subscriptionId === undefined || resourceGroup === undefined || cluster === undefined) return undefined;
  return nodePool === undefined
    ? { kind: "cluster", subscriptionId, resourceGroup, cluster }
    : { kind: "nodePool", subscriptionId, resourceGroup, cluster, nodePool };
}

const typeOfRoute = (r: Route): string =>
  r.name.includes("nodePools")
    ? "nodePools"
    : r.name.includes("hcpOperation")
      ? "hcpOperationStatuses"
      : r.name.includes("Versions")
        ? "locations/hcpOpenShiftVersions"
        : "hcpOpenShiftClusters";

export class Frontend implements Runnable {
  readonly needLeaderElection = false;
  readonly #opts: FrontendOptions;
  readonly #log: Logger;
  readonly #client: KubeClient;
  readonly #operations: OperationStore;
  readonly #subscriptions: SubscriptionStore;
  readonly #resources: ResourceHandlers;
  readonly #catalog: CatalogReader;
  #watches: AbortController | undefined;
  readonly #routes: Route[];
  readonly #registry: Registry;
  readonly #metrics: ReturnType<typeof requestMetrics>;
  #server: Server | undefined;

  constructor(opts: FrontendOptions) {
    this.#opts = opts;
    this.#log = opts.log ?? silentLogger;
    this.#client = opts.client;
    this.#operations = new OperationStore(opts.client);
    this.#subscriptions = new SubscriptionStore(opts.client);
    this.#catalog = new CatalogReader(opts.client, opts.catalogNamespace ?? "hcp-system");
    this.#resources = new ResourceHandlers({
      client: opts.client,
      operations: this.#operations,
      catalog: this.#catalog,
      pageSize: opts.pageSize ?? 100,
      log: this.#log,
    });
    this.#registry = opts.registry ?? metricsRegistry;
    this.#metrics = requestMetrics(this.#registry);
    this.#routes = this.#table();
  }

  #table(): Route[] {
    const res = this.#resources;
    const id = (req: ArmRequest): ResourceId => {
      const found = resourceIdOf(req.params);
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
      route({ pattern: PATTERNS.clusters, methods: { GET: (r) => res.list(r, "cluster", scope(r)) } }),
      route({ pattern: PATTERNS.cluster, methods: crud }),
      route({
        pattern: PATTERNS.requestAdminCredential,
        methods: { POST: (r) => res.credentials(r, id(r), "requestAdminCredential") },
      }),
      route({
        pattern: PATTERNS.revokeCredentials,
        methods: { POST: (r) => res.credentials(r, id(r), "revokeCredentials") },
      }),
      route({ pattern: PATTERNS.nodePools, methods: { GET: (r) => res.list(r, "nodePool", scope(r)) } }),
      route({ pattern: PATTERNS.nodePool, methods: crud }),
      route({
        pattern: PATTERNS.preflight,
        apiVersion: "none",
        methods: { POST: (r) => preflight(this.#client, r) },
      }),
    ];
  }

  /** Runs the middleware and the handler; every failure becomes a CloudError reply. */
  async #dispatch(req: IncomingMessage, base: ArmRequest): Promise<{ reply: Reply; route: string }> {
    const url = new URL(req.url ?? "/", "https://frontend");
    const raw = await readBody(req, MAX_BODY_BYTES);
    const body = parseBody(base.method, req.headers["content-type"], raw);
    const found = match(this.#routes, url.pathname);
    if (!found)
      throw new CloudError(404, {
        code: CODES.NotFound,
        message: `The requested path '${url.pathname}' was not found.`,
      });
    const { route: r, params } = found;
    const handler = r.methods[base.method];
    if (!handler)
      throw new CloudError(405, {
        code: CODES.MethodNotAllowed,
        message: `The method '${base.method}' is not allowed here.`,
      });
    resourceIdOf(params);
    const version = url.searchParams.get("api-version");
    checkApiVersion(r, version, `${"Microsoft.RedHatOpenShift"}/${typeOfRoute(r)}`);
    const armReq: ArmRequest = { ...base, path: url.pathname, query: url.searchParams, params, body };
    // Routes that serve no resource version (subscription, preflight) do not read it.
    if (version !== null && isServedVersion(version)) armReq.apiVersion = version;
    if (r.checkSubscription) {
      const sub = params["subscriptionId"] ?? "";
      armReq.subscription = checkSubscriptionState(sub, await this.#subscriptions.get(sub), base.method);
    }
    return { reply: await handler(armReq), route: r.name };
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = (req.method ?? "GET").toUpperCase();
    const requestId = randomUUID();
    const correlationRequestId = header(req, "x-ms-correlation-request-id");
    const clientRequestId = header(req, "x-ms-client-request-id");
    const headers: Record<string, string> = { "x-ms-request-id": requestId };
    if (correlationRequestId) headers["x-ms-correlation-request-id"] = correlationRequestId;
    if (clientRequestId && header(req, "x-ms-return-client-request-id")?.toLowerCase() === "true")
      headers["x-ms-client-request-id"] = clientRequestId;
    const log = this.#log.child({ requestId, correlationRequestId, clientRequestId });
    let routeName = "unmatched";
    let reply: Reply;
    try {
      if (!(req.socket as TLSSocket).authorized)
        throw new CloudError(401, {
          code: CODES.Unauthorized,
          message: "A client certificate signed by the configured ARM client CA is required.",
        });
      const special = await this.#special(req, method);
      if (special) reply = special;
      else {
        const base: ArmRequest = {
          method,
          path: "",
          query: new URLSearchParams(),
          params: {},
          headers: req.headers,
          body: undefined,
          apiVersion: "2026-06-30-preview",
          base: baseOf(req),
          requestId,
          ...(correlationRequestId ? { correlationRequestId } : {}),
          ...(clientRequestId ? { clientRequestId } : {}),
          ...(systemDataOf(req) ? { systemData: systemDataOf(req) } : {}),
          log,
        };
        ({ reply, route: routeName } = await this.#dispatch(req, base));
      }
    } catch (err) {
      reply = this.#errorReply(err, log, method, req.url);
    }
    this.#write(res, reply, headers);
    this.#metrics.requests.inc({ method, route: routeName, code: String(reply.status) });
    this.#metrics.duration.observe({ method, route: routeName }, (performance.now() - started) / 1000);
  }

  async #special(req: IncomingMessage, method: string): Promise<Reply | undefined> {
    const path = (req.url ?? "/").split("?")[0];
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

  #errorReply(err: unknown, log: Logger, method: string, url: string | undefined): Reply {
    const e = err instanceof CloudError ? err : internalError();
    if (!(err instanceof CloudError)) log.error("ARM request failed", err, { method, url });
    const body: { error: CloudErrorBody } = { error: e.body };
    return { status: e.status, body, headers: { "x-ms-error-code": e.body.code, ...e.headers } };
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
    const server = createServer(
      { cert: tls.cert, key: tls.key, ca: tls.clientCA, requestCert: true, rejectUnauthorized: false },
      (req, res) => void this.handle(req, res),
    );
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.#opts.port ?? 8443, this.#opts.host ?? "0.0.0.0", () => resolve());
    });
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    this.#log.info("ARM frontend listening", { port });
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
    const collect = (): void =>
      void this.#operations
        .collectExpired()
        .catch((err: unknown) => this.#log.error("Operation cleanup failed", err));
    const timer = setInterval(collect, OPERATION_CLEANUP_MS);
    collect();
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    clearInterval(timer);
    await this.close();
  }
}
