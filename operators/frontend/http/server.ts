/**
 * The ARM frontend: an HTTPS server that only ARM may call, running ARO HCP's frontend middleware
 * in its order, one file each: request IDs and correlation (request-ids.ts, carried-headers.ts),
 * authentication (authentication.ts), the special paths, the body limit (body-limit.ts) and media
 * type, routing (router.ts), resource names (names.ts), api-version (api-version.ts), subscription
 * state (subscription-state.ts) and system data; then the handler. Every failure is a CloudError
 * reply (reply.ts); every request is counted (metrics.ts) and logged (request-log.ts). Handlers
 * read and write CRs only.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "node:https";
import type { TLSSocket } from "node:tls";
import type { Registry } from "prom-client";
import type { AzureClients } from "../../azure/clients.ts";
import type { KubeClient } from "../../runtime/kube.ts";
import { silentLogger, type Logger } from "../../runtime/logger.ts";
import type { Runnable } from "../../runtime/manager.ts";
import { metricsRegistry } from "../../runtime/metrics.ts";
import { API_VERSIONS, type ApiVersion } from "../api/registry.ts";
import type { ArmRequest, Reply } from "../arm-request.ts";
import { AzureChecks } from "../checks/azure-checks.ts";
import type { ResourceDeps } from "../handlers/deps.ts";
import { SubscriptionStore } from "../handlers/subscriptions.ts";
import { adoptSettings } from "../mapping/adopt-settings.ts";
import { CatalogReader } from "../versions/openshift-versions.ts";
import { resolveDeadlines, type OperationDeadlines } from "../operations/deadlines.ts";
import { collectUntil } from "../operations/garbage-collection.ts";
import { resolveNotificationOptions } from "../operations/notification-uri.ts";
import { OperationStore } from "../operations/store.ts";
import { checkApiVersion } from "./api-version.ts";
import { checkClientCertificate } from "./authentication.ts";
import { readBody } from "./body-limit.ts";
import { checkCarriedHeaders, readSystemData, type CheckedHeaders } from "./carried-headers.ts";
import { parseRequestBody } from "./media-type.ts";
import { requestMetrics, routeLabel, UNMATCHED_ROUTE, type RequestMetrics } from "./metrics.ts";
import { resourceIdFromPath } from "./names.ts";
import { errorReply, writeReply } from "./reply.ts";
import { requestIds, type RequestIds } from "./request-ids.ts";
import { logRequest } from "./request-log.ts";
import { baseOf, urlOf } from "./request-url.ts";
import { routeTable } from "./route-table.ts";
import { routeRequest } from "./router.ts";
import type { Route } from "./routes.ts";
import { specialPath } from "./special-paths.ts";
import { subscriptionFor } from "./subscription-state.ts";
import {
  createTlsServer,
  DEFAULT_CONNECTION_LIMITS,
  type ConnectionLimits,
  type TlsMaterial,
} from "./tls.ts";

export { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from "./tls.ts";

export interface FrontendOptions {
  client: KubeClient;
  tls: TlsMaterial;
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
   * DEFAULT_NOTIFICATION_HOSTS. The OperationNotifier (operations/notifier.ts) sends them.
   */
  notificationHosts?: string[];
  /**
   * Azure, where a create's customer resources are checked first (azure-checks.ts): identities,
   * their roles, the KMS key, VM sizes, vCPU quota. Without it nothing is checked in Azure.
   */
  azure?: AzureClients;
}

/**
 * The api-version a request on a route that serves none carries to its handler (subscription,
 * preflight and the provider's operations read none).
 */
const UNVERSIONED: ApiVersion = newestVersion();

function newestVersion(): ApiVersion {
  const newest = API_VERSIONS[API_VERSIONS.length - 1];
  if (!newest) throw new Error("No api-version is registered");
  return newest;
}

/** What the middleware knows of a request before routing. */
interface IncomingRequest {
  method: string;
  url: URL;
  carried: CheckedHeaders;
  ids: RequestIds;
  /** Carries the request, correlation and client request IDs. */
  log: Logger;
}

export class Frontend implements Runnable {
  readonly needLeaderElection = false;
  readonly #opts: FrontendOptions;
  readonly #log: Logger;
  readonly #client: KubeClient;
  readonly #subscriptions: SubscriptionStore;
  readonly #catalog: CatalogReader;
  readonly #routes: Route[];
  readonly #registry: Registry;
  readonly #metrics: RequestMetrics;
  #watches: AbortController | undefined;
  #server: Server | undefined;
  /** Settles once settings kept before their spec fields existed are in the specs (mapping/adopt-settings.ts). */
  adopted: Promise<number> = Promise.resolve(0);

  constructor(opts: FrontendOptions) {
    this.#opts = opts;
    this.#log = opts.log ?? silentLogger;
    this.#client = opts.client;
    const operations = new OperationStore(opts.client);
    this.#subscriptions = new SubscriptionStore(opts.client);
    this.#catalog = new CatalogReader(opts.client, opts.catalogNamespace ?? "hcp-system");
    const azure = opts.azure ? new AzureChecks({ clients: opts.azure, log: this.#log }) : undefined;
    const notificationHosts = resolveNotificationOptions({
      ...(opts.notificationHosts ? { allowedHosts: opts.notificationHosts } : {}),
    }).allowedHosts;
    const resources: ResourceDeps = {
      client: opts.client,
      operations,
      catalog: this.#catalog,
      pageSize: opts.pageSize ?? 100,
      deadlines: resolveDeadlines(opts.deadlines),
      notificationHosts,
      log: this.#log,
      ...(azure ? { azure } : {}),
    };
    this.#routes = routeTable({
      client: opts.client,
      operations,
      subscriptions: this.#subscriptions,
      catalog: this.#catalog,
      resources,
      azure,
    });
    this.#registry = opts.registry ?? metricsRegistry;
    this.#metrics = requestMetrics(this.#registry);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = (req.method ?? "GET").toUpperCase();
    const carried = checkCarriedHeaders(req.headers);
    const ids = requestIds(req.headers, carried);
    const { requestId, correlationRequestId, clientRequestId } = ids;
    const log = this.#log.child({ requestId, correlationRequestId, clientRequestId });
    let route = UNMATCHED_ROUTE;
    let reply: Reply;
    let failure: unknown;
    try {
      const url = urlOf(req);
      route = routeLabel(this.#routes, url.pathname);
      reply = await this.#serve(req, { method, url, carried, ids, log });
    } catch (err) {
      failure = err;
      reply = errorReply(err);
    }
    writeReply(res, reply, ids.replyHeaders);
    const seconds = (performance.now() - started) / 1000;
    this.#metrics.observe(method, route, reply.status, seconds);
    logRequest(log, { method, route, url: req.url, status: reply.status, seconds, err: failure });
  }

  /** Authentication, then the special paths or the ARM routes. */
  async #serve(req: IncomingMessage, r: IncomingRequest): Promise<Reply> {
    checkClientCertificate(req.socket as TLSSocket);
    const special = await specialPath(this.#registry, r.method, r.url.pathname);
    if (special) return special;
    if (r.carried.refusal) throw r.carried.refusal;
    const systemData = readSystemData(r.carried.headers);
    const body = parseRequestBody(r.method, req.headers["content-type"], await readBody(req));
    const { route, params, handler } = routeRequest(this.#routes, r.method, r.url.pathname);
    const resource = resourceIdFromPath(params);
    const apiVersion = checkApiVersion(route, r.url.searchParams.get("api-version"));
    const armReq: ArmRequest = {
      method: r.method,
      path: r.url.pathname,
      query: r.url.searchParams,
      params,
      headers: r.carried.headers,
      body,
      apiVersion: apiVersion ?? UNVERSIONED,
      base: baseOf(req),
      requestId: r.ids.requestId,
      ...(r.ids.correlationRequestId ? { correlationRequestId: r.ids.correlationRequestId } : {}),
      ...(r.ids.clientRequestId ? { clientRequestId: r.ids.clientRequestId } : {}),
      ...(systemData ? { systemData } : {}),
      ...(resource ? { resource } : {}),
      log: r.log,
    };
    const subscription = await subscriptionFor(
      route,
      params["subscriptionId"] ?? "",
      r.method,
      this.#subscriptions,
    );
    if (subscription) armReq.subscription = subscription;
    return handler(armReq);
  }

  /**
   * Starts the watches (subscriptions, catalog) and listening; resolves with the bound port. Until
   * a watch has synced its reads go to the API server directly.
   */
  async listen(): Promise<number> {
    const watches = new AbortController();
    this.#watches = watches;
    for (const informer of [this.#subscriptions.informer, this.#catalog.informer])
      void informer.run(watches.signal).catch((err: unknown) => this.#log.error("A watch stopped", err));
    const limits = { ...DEFAULT_CONNECTION_LIMITS, ...this.#opts.connections };
    const server = createTlsServer(
      this.#opts.tls,
      limits,
      this.#log,
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

  /** Runnable: serves until the signal aborts, collecting expired operation documents (operations/garbage-collection.ts). */
  async start(signal: AbortSignal): Promise<void> {
    await this.listen();
    await collectUntil(this.#client, this.#log, signal);
    await this.close();
  }
}
