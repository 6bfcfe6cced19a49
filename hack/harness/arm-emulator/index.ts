/**
 * An Azure Resource Manager emulator for tests and the local region: one https server on
 * 127.0.0.1 that is both the ARM endpoint and the Entra ID authority host, with a CA made for the
 * run. It serves resource groups, DNS zones and record sets, public IPs, load balancers (private
 * frontends in a subnet too), virtual networks and their subnets, user-assigned identities, role assignments, key vaults and their keys, VM sizes and vCPU usages
 * with ARM's status codes, error bodies and long-running operations, and lets tests inject faults and
 * read the request log. The real Azure SDK clients talk to it unchanged (endpoint, authority host
 * and the CA are the only settings).
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenHttps } from "../https-server.ts";
import { TokenAuthority } from "./auth.ts";
import type { EmulatorContext } from "./context.ts";
import { Faults, RequestLog, type FaultInjector, type RequestLogEntry, type RequestMatch } from "./faults.ts";
import {
  asObject,
  asString,
  cloudError,
  newRequestId,
  readRequest,
  writeReply,
  type ArmReply,
  type ArmRequest,
} from "./http.ts";
import {
  ARM_REQUEST_LIMITS,
  RequestLimiter,
  remainingHeader,
  requestKind,
  throttledReply,
  type RequestLimits,
} from "./limits.ts";
import { ComputeCatalog, type SkuRestriction, type VcpuUsage, type VmSize } from "./compute.ts";
import { AsyncOperations } from "./operations.ts";
import { route } from "./router.ts";
import { ResourceStore, snapshot, type ArmResourceRecord } from "./store.ts";

export type { ArmResourceRecord } from "./store.ts";
export {
  DEFAULT_FAMILY_LIMIT,
  DEFAULT_LOCATIONS,
  DEFAULT_VCPU_LIMIT,
  type SkuRestriction,
  type VcpuUsage,
  type VmSize,
} from "./compute.ts";
export { ARM_REQUEST_LIMITS, type RequestLimits } from "./limits.ts";
export {
  USER_ERRORS,
  type ErrorFault,
  type FaultHandle,
  type FaultInjector,
  type HoldHandle,
  type RequestLogEntry,
  type RequestMatch,
} from "./faults.ts";

export interface ArmEmulator {
  /** https://127.0.0.1:<port>: the ARM endpoint and the Entra ID authority host. */
  endpoint: string;
  /** PEM of the CA that signed the server certificate. */
  caPath: string;
  /** The one service principal the token endpoint accepts. */
  tenantId: string;
  clientId: string;
  clientSecret: string;
  faults: FaultInjector;
  /**
   * What Azure, not the customer, sets for Microsoft.Compute: the VM sizes offered per location and
   * zone (default: common sizes in every zone of DEFAULT_LOCATIONS), restrictions per subscription,
   * and each subscription's vCPU usage and quota per location (default: none used, a generous limit).
   */
  compute: ComputeControl;
  /**
   * Checks a bearer token this emulator's Entra ID issued, for another service emulated beside it
   * (the storage emulator): undefined when it is good for `audience`, else why not.
   */
  verifyBearer: (authorization: string | undefined, audience: string) => string | undefined;
  /** Everything that exists now (resource groups, resources, record sets), in creation order. */
  resources(): ArmResourceRecord[];
  /** Requests received so far, optionally only those matching. */
  requests(match?: RequestMatch): RequestLogEntry[];
  clearRequests(): void;
  stop(): Promise<void>;
}

export interface ComputeControl {
  /** Offers a VM size (replacing one of the same name). */
  offer(size: VmSize): void;
  /** Stops offering a VM size anywhere. */
  withdraw(name: string): void;
  /** Keeps a VM size from a subscription (or every one) in a location or some of its zones. */
  restrict(restriction: SkuRestriction): void;
  /** Sets a usage line (`cores` or a family) of a subscription in a location. */
  setUsage(subscriptionId: string, location: string, usage: VcpuUsage): void;
}

export interface StartArmEmulatorOptions {
  /** Certificates go to `<workDir>/arm-emulator/`. */
  workDir: string;
  /** How long an asynchronous operation stays InProgress. Default 100 ms. */
  asyncDelayMs?: number;
  /** Default: a free port chosen by the OS. */
  port?: number;
  /** Lifetime of issued access tokens. Default 3600 s. */
  tokenLifetimeSeconds?: number;
  /**
   * ARM's token buckets per subscription, principal and kind of request (limits.ts). Default
   * ARM's own; "off" for none, as when a test needs a burst no subscription would be allowed.
   */
  requestLimits?: RequestLimits | "off";
}

export async function startArmEmulator(opts: StartArmEmulatorOptions): Promise<ArmEmulator> {
  const { server, endpoint, caPath } = await listenHttps(opts.workDir, "arm-emulator", opts.port);

  const principal = {
    tenantId: randomUUID(),
    clientId: randomUUID(),
    clientSecret: randomBytes(24).toString("base64url"),
  };
  const authority = new TokenAuthority({
    key: randomBytes(32),
    endpoint,
    principal,
    lifetimeSeconds: opts.tokenLifetimeSeconds ?? 3600,
  });
  let ipCounter = 10;
  const ctx: EmulatorContext = {
    endpoint,
    store: new ResourceStore(),
    ops: new AsyncOperations(endpoint, opts.asyncDelayMs ?? 100),
    faults: new Faults(),
    tenantId: principal.tenantId,
    compute: new ComputeCatalog(),
    nextIpAddress: () => {
      const n = ipCounter++;
      return `20.60.${(n >> 8) & 255}.${n & 255}`;
    },
  };
  const log = new RequestLog();
  const limits = opts.requestLimits ?? ARM_REQUEST_LIMITS;
  const limiter = limits === "off" ? undefined : new RequestLimiter(limits);
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    void serve({ ctx, authority, log, limiter }, req, res);
  });

  return {
    endpoint,
    caPath,
    ...principal,
    faults: ctx.faults,
    compute: {
      offer: (size) => ctx.compute.offer(size),
      withdraw: (name) => ctx.compute.withdraw(name),
      restrict: (restriction) => ctx.compute.restrict(restriction),
      setUsage: (subscriptionId, location, usage) => ctx.compute.setUsage(subscriptionId, location, usage),
    },
    verifyBearer: (authorization, audience) => {
      const check = authority.verifyBearer(authorization, [audience]);
      return check.ok ? undefined : asString(asObject(asObject(check.reply.body)["error"])["message"]);
    },
    resources: () => ctx.store.all().map(snapshot),
    requests: (match) => log.list(match),
    clearRequests: () => log.clear(),
    stop: async () => {
      ctx.ops.stop();
      ctx.faults.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

interface Serving {
  ctx: EmulatorContext;
  authority: TokenAuthority;
  log: RequestLog;
  limiter: RequestLimiter | undefined;
}

async function serve(s: Serving, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = newRequestId();
  // SDKs put a scope that starts with "/" after the path's own "/" (role assignments): "//subscriptions/…"
  // would read as a host.
  const url = new URL((req.url ?? "/").replace(/^\/+/, "/"), s.ctx.endpoint);
  const entry = s.log.start((req.method ?? "GET").toUpperCase(), url.pathname);
  let reply: ArmReply;
  try {
    const armReq = await readRequest(req, url);
    const injected = await applyFaults(s.ctx, armReq);
    entry.injected = injected !== undefined;
    reply = injected ?? answer(s, armReq);
  } catch (err) {
    // A bug in the emulator: answer like ARM's own failures so the client retries, and say what.
    reply = cloudError(
      500,
      "InternalServerError",
      `ARM emulator: ${err instanceof Error ? err.stack : String(err)}`,
    );
  }
  entry.status = reply.status;
  const code =
    asString(asObject(asObject(reply.body)["error"])["code"]) ?? asString(asObject(reply.body)["error"]);
  if (code !== undefined) entry.code = code;
  writeReply(res, reply, requestId);
}

/** Latency, then a hang, then an injected reply, as the matching faults say. */
async function applyFaults(ctx: EmulatorContext, req: ArmRequest): Promise<ArmReply | undefined> {
  const delay = ctx.faults.takeLatency(req.method, req.path);
  if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  const hold = ctx.faults.takeRequestHold(req.method, req.path);
  if (hold) await hold;
  return ctx.faults.takeReply(req.method, req.path);
}

function answer(s: Serving, req: ArmRequest): ArmReply {
  const entra = s.authority.handle(req);
  if (entra) return entra;
  const check = s.authority.verify(req);
  if (!check.ok) return check.reply;
  const subscriptionId = req.segments[0]?.toLowerCase() === "subscriptions" ? req.segments[1] : undefined;
  if (!s.limiter || subscriptionId === undefined) return route(s.ctx, req);
  const kind = requestKind(req.method);
  const admission = s.limiter.take(subscriptionId, check.claims.oid, kind);
  if (!admission.admitted)
    return throttledReply(subscriptionId, check.claims.oid, kind, admission.retryAfterSeconds);
  const reply = route(s.ctx, req);
  return { ...reply, headers: { ...reply.headers, ...remainingHeader(kind, admission.remaining) } };
}
