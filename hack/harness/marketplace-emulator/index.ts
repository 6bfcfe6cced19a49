/**
 * An Azure Marketplace metering API emulator for tests and the local region: one https server on
 * 127.0.0.1 with a CA made for the run, answering the two metered-billing calls of api-version
 * 2018-08-31 as the service documents them:
 *
 * - `POST /api/usageEvent`: one event; 200 with the accepted event, 400 naming the bad field,
 *   409 Conflict with the original when the (resource, dimension, hour) already holds one;
 * - `POST /api/batchUsageEvent`: `{ request: [...] }` of 1 to 25 events; 200 with a status per
 *   event (Accepted, Duplicate, Expired, ResourceNotFound, ResourceNotActive, InvalidDimension,
 *   InvalidQuantity, BadArgument), the whole batch refused with 400 when it is not one.
 *
 * Only one event per resource, dimension and UTC hour is ever accepted; an event whose hour began
 * more than 24 hours before the (injectable) clock is Expired. Resources are the subscriptions
 * the emulator knows (registered up front or later), each on one plan with its dimensions; with
 * `registerUnknown` (the local region, whose clusters are made on the fly) a resource it does not
 * know is registered on that plan at its first event instead of answering ResourceNotFound.
 * Bearer tokens for the marketplace audience are checked by the ARM emulator's authority when it
 * is given one; a refused token is a 403, as the service answers. `x-ms-requestid` and
 * `x-ms-correlationid` are echoed (made up when missing).
 *
 * Tests inject faults (a status such as 503, 429 with Retry-After, a connection dropped before or
 * after the events were accepted, a slow answer) and read what was accepted and the request log.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenHttps } from "../https-server.ts";

/** The Entra ID application of the metering API: tokens are asked for `<this>/.default`. */
export const MARKETPLACE_AUDIENCE = "20e940b3-4c77-4b0b-9a53-9e16a1b010a7";
export const MARKETPLACE_API_VERSION = "2018-08-31";
export const MAX_BATCH_EVENTS = 25;
/** How old an event's hour may be, as the service has it. */
export const ACCEPTED_LATENESS_MS = 24 * 3600_000;

/** A subscription the API knows: usage against it is accepted for its plan's dimensions. */
export interface MarketplaceResource {
  /** The SaaS subscription ID, or a managed application's resource ID. */
  resourceId: string;
  planId: string;
  dimensions: string[];
  /** A suspended or unsubscribed resource answers ResourceNotActive. Default true. */
  active?: boolean;
}

/** An event the API accepted (and would bill). */
export interface AcceptedUsageEvent {
  usageEventId: string;
  resourceId: string;
  planId: string;
  dimension: string;
  quantity: number;
  /** As sent. */
  effectiveStartTime: string;
  /** The UTC hour it counts for (the duplicate key's hour). */
  hour: string;
  messageTime: string;
  /** The x-ms-requestid of the call that carried it. */
  requestId: string;
}

export interface MarketplaceRequest {
  method: string;
  path: string;
  requestId: string;
  correlationId: string;
  /** 0 when the connection was dropped unanswered. */
  status: number;
  /** Events in the body (0 when it was not a list). */
  events: number;
  /** The fault that took the request, if one did. */
  injected?: MarketplaceFault["kind"];
}

export type MarketplaceFault =
  /** Answers this status (5xx, or any other) without looking at the events. */
  | { kind: "status"; status: number; code?: string }
  /** 429 with `Retry-After: <seconds>`, the events not looked at. */
  | { kind: "throttle"; retryAfterSeconds: number }
  /** Closes the connection unanswered, the events not looked at. */
  | { kind: "drop-before" }
  /** Accepts the events, then closes the connection unanswered: the client cannot know. */
  | { kind: "drop-after" }
  /** Accepts the events and answers after `ms` (unless the client gave up first). */
  | { kind: "slow"; ms: number };

export interface MarketplaceFaultRule {
  /** Only this call (default: both). */
  path?: "usageEvent" | "batchUsageEvent";
  /** How many requests it takes (default: every one until removed). */
  times?: number;
  fault: MarketplaceFault;
}

export interface MarketplaceEmulator {
  /** `https://127.0.0.1:<port>`: where `/api/...` is. */
  endpoint: string;
  caPath: string;
  faults: {
    add(rule: MarketplaceFaultRule): { remove(): void };
    clear(): void;
  };
  /** Adds or replaces a resource (by resourceId). */
  register(resource: MarketplaceResource): void;
  /** Every event accepted so far, in order. */
  accepted(): AcceptedUsageEvent[];
  requests(): MarketplaceRequest[];
  stop(): Promise<void>;
}

export interface StartMarketplaceEmulatorOptions {
  /** Certificates go to `<workDir>/marketplace-emulator/`. */
  workDir: string;
  resources?: MarketplaceResource[];
  /**
   * Registers a resource it does not know, on this plan with these dimensions, at its first event
   * (the event is then judged as any other). Default: unknown resources are ResourceNotFound.
   */
  registerUnknown?: Omit<MarketplaceResource, "resourceId">;
  /** The clock expiry is judged by. Default: the machine's. */
  now?: () => Date;
  /** Checks a request's Authorization header: why it is refused, or undefined. None: anything goes. */
  verifyBearer?: (authorization: string | undefined, audience: string) => string | undefined;
  port?: number;
}

export async function startMarketplaceEmulator(
  opts: StartMarketplaceEmulatorOptions,
): Promise<MarketplaceEmulator> {
  const { server, endpoint, caPath } = await listenHttps(opts.workDir, "marketplace-emulator", opts.port);
  const state: State = {
    resources: new Map((opts.resources ?? []).map((r) => [r.resourceId.toLowerCase(), { ...r }])),
    byKey: new Map(),
    accepted: [],
    rules: [],
    log: [],
    now: opts.now ?? (() => new Date()),
    verifyBearer: opts.verifyBearer,
    registerUnknown: opts.registerUnknown,
    timers: new Set(),
  };
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    serve(state, req, res).catch((err: unknown) => {
      res.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  });
  return {
    endpoint,
    caPath,
    faults: {
      add(rule) {
        const entry = { ...rule };
        state.rules.push(entry);
        return { remove: () => void state.rules.splice(state.rules.indexOf(entry) >>> 0, 1) };
      },
      clear: () => void state.rules.splice(0),
    },
    register: (r) => void state.resources.set(r.resourceId.toLowerCase(), { ...r }),
    accepted: () => state.accepted.map((e) => ({ ...e })),
    requests: () => state.log.map((e) => ({ ...e })),
    stop: async () => {
      state.rules.splice(0);
      for (const t of state.timers) clearTimeout(t);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

interface State {
  resources: Map<string, MarketplaceResource>;
  /** The duplicate rule: `<resource>|<dimension>|<hour>` → the accepted event. */
  byKey: Map<string, AcceptedUsageEvent>;
  accepted: AcceptedUsageEvent[];
  rules: MarketplaceFaultRule[];
  log: MarketplaceRequest[];
  now: () => Date;
  verifyBearer: StartMarketplaceEmulatorOptions["verifyBearer"];
  registerUnknown: StartMarketplaceEmulatorOptions["registerUnknown"];
  timers: Set<NodeJS.Timeout>;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

type Json = Record<string, unknown>;

async function serve(state: State, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "https://127.0.0.1");
  const entry = logged(state, req, url);
  const body = await readBody(req);
  const call = callOf(url.pathname);
  const fault = call ? takeFault(state, call) : undefined;
  if (fault) entry.injected = fault.kind;
  const send = (reply: Reply): void => write(res, entry, reply);
  if (fault?.kind === "drop-before") return void res.destroy();
  const early = fault && faultReply(fault);
  if (early) return send(early);
  const reply = answerSafely(state, {
    method: entry.method,
    url,
    call,
    req,
    body,
    entry,
  });
  if (fault?.kind === "drop-after") return void res.destroy();
  if (fault?.kind === "slow") return answerLater(state, res, () => send(reply), fault.ms);
  send(reply);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function logged(state: State, req: IncomingMessage, url: URL): MarketplaceRequest {
  const entry: MarketplaceRequest = {
    method: (req.method ?? "GET").toUpperCase(),
    path: url.pathname,
    requestId: header(req, "x-ms-requestid") ?? randomUUID(),
    correlationId: header(req, "x-ms-correlationid") ?? randomUUID(),
    status: 0,
    events: 0,
  };
  state.log.push(entry);
  return entry;
}

function answerSafely(state: State, r: ApiRequest): Reply {
  try {
    return answer(state, r);
  } catch (err) {
    return apiError(500, "InternalServerError", `marketplace emulator: ${String(err)}`);
  }
}

/** The answer of a fault that stands in for the API's (the events never looked at). */
function faultReply(fault: MarketplaceFault): Reply | undefined {
  if (fault.kind === "status")
    return apiError(fault.status, fault.code ?? "InternalServerError", "Injected fault.");
  if (fault.kind === "throttle")
    return {
      ...apiError(429, "TooManyRequests", "Too many requests."),
      headers: { "retry-after": String(fault.retryAfterSeconds) },
    };
  return undefined;
}

function answerLater(state: State, res: ServerResponse, send: () => void, ms: number): void {
  const timer = setTimeout(() => {
    state.timers.delete(timer);
    if (!res.destroyed) send();
  }, ms);
  state.timers.add(timer);
  // A client that gave up closes the connection: no answer is owed any more.
  res.on("close", () => {
    clearTimeout(timer);
    state.timers.delete(timer);
  });
}

function write(res: ServerResponse, entry: MarketplaceRequest, reply: Reply): void {
  entry.status = reply.status;
  const body = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
    "x-ms-requestid": entry.requestId,
    "x-ms-correlationid": entry.correlationId,
    ...reply.headers,
  });
  res.end(body);
}

type Call = "usageEvent" | "batchUsageEvent";

function callOf(path: string): Call | undefined {
  const p = path.replace(/\/+$/, "").toLowerCase();
  if (p === "/api/usageevent") return "usageEvent";
  if (p === "/api/batchusageevent") return "batchUsageEvent";
  return undefined;
}

function takeFault(state: State, call: Call): MarketplaceFault | undefined {
  const rule = state.rules.find((r) => !r.path || r.path === call);
  if (!rule) return undefined;
  if (rule.times !== undefined && --rule.times <= 0) state.rules.splice(state.rules.indexOf(rule), 1);
  return rule.fault;
}

interface ApiRequest {
  method: string;
  url: URL;
  call: Call | undefined;
  req: IncomingMessage;
  body: string;
  entry: MarketplaceRequest;
}

function answer(state: State, r: ApiRequest): Reply {
  if (!r.call) return apiError(404, "NotFound", `No API at ${r.url.pathname}.`);
  if (r.method !== "POST") return apiError(405, "MethodNotAllowed", `${r.url.pathname} takes POST only.`);
  const version = r.url.searchParams.get("api-version");
  if (version !== MARKETPLACE_API_VERSION)
    return badArgument(
      "api-version",
      version ? `api-version ${version} is not supported.` : "The api-version query parameter is required.",
    );
  if (state.verifyBearer) {
    const why = state.verifyBearer(header(r.req, "authorization"), MARKETPLACE_AUDIENCE);
    if (why) return apiError(403, "Forbidden", `The authorization token is missing or not valid: ${why}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(r.body);
  } catch {
    return badArgument("body", "The request body is not JSON.");
  }
  return r.call === "usageEvent" ? single(state, parsed, r.entry) : batch(state, parsed, r.entry);
}

function single(state: State, body: unknown, entry: MarketplaceRequest): Reply {
  entry.events = isObject(body) ? 1 : 0;
  const outcome = process(state, body, entry.requestId);
  if (outcome.status === "Accepted") return { status: 200, body: outcome.result };
  if (outcome.status === "Duplicate") return { status: 409, body: outcome.result["error"] };
  const error = outcome.result["error"] as Json;
  return {
    status: outcome.status === "ResourceNotAuthorized" ? 403 : 400,
    body: {
      code: outcome.status === "BadArgument" ? "BadArgument" : outcome.status,
      message: error["message"],
      target: "usageEventRequest",
      details: [error],
    },
  };
}

function batch(state: State, body: unknown, entry: MarketplaceRequest): Reply {
  const events = isObject(body) ? body["request"] : undefined;
  if (!Array.isArray(events)) return badArgument("request", "The body must be { request: [ ...events ] }.");
  entry.events = events.length;
  if (events.length === 0) return badArgument("request", "The request holds no events.");
  if (events.length > MAX_BATCH_EVENTS)
    return badArgument(
      "request",
      `The request holds ${events.length} events; a batch takes at most ${MAX_BATCH_EVENTS}.`,
    );
  const result = events.map((e) => process(state, e, entry.requestId).result);
  return { status: 200, body: { count: result.length, result } };
}

type Status =
  | "Accepted"
  | "Duplicate"
  | "Expired"
  | "ResourceNotFound"
  | "ResourceNotAuthorized"
  | "ResourceNotActive"
  | "InvalidDimension"
  | "InvalidQuantity"
  | "BadArgument";

/** Judges one event and accepts it when it passes: its status and its result object. */
function process(state: State, raw: unknown, requestId: string): Outcome {
  const now = state.now();
  const messageTime = now.toISOString();
  const echo = isObject(raw) ? pick(raw) : {};
  const refuse = (r: Refusal): Outcome => ({
    status: r.status,
    result: { status: r.status, messageTime, ...echo, error: { code: r.status, ...r.error } },
  });
  const fields = isObject(raw)
    ? fieldsOf(raw, now)
    : refusal("BadArgument", "usageEvent", "An event must be a JSON object.");
  if ("status" in fields) return refuse(fields);
  const judged = judge(state, fields);
  if (judged) return refuse(judged);
  const key = `${fields.resourceId.toLowerCase()}|${fields.dimension}|${fields.hour.toISOString()}`;
  const original = state.byKey.get(key);
  if (original)
    return refuse(
      refusal("Duplicate", "usageEvent", "This usage event already exists.", {
        code: "Conflict",
        additionalInfo: { acceptedMessage: publicView(original) },
      }),
    );
  const accepted: AcceptedUsageEvent = {
    usageEventId: randomUUID(),
    ...fields,
    hour: fields.hour.toISOString(),
    messageTime,
    requestId,
  };
  state.byKey.set(key, accepted);
  state.accepted.push(accepted);
  return { status: "Accepted", result: { ...publicView(accepted), status: "Accepted" } };
}

interface Outcome {
  status: Status;
  result: Json;
}

interface Refusal {
  status: Status;
  error: Json;
}

function refusal(status: Status, target: string, message: string, extra: Json = {}): Refusal {
  return { status, error: { target, message, ...extra } };
}

interface Fields {
  resourceId: string;
  planId: string;
  dimension: string;
  quantity: number;
  effectiveStartTime: string;
  hour: Date;
}

/** The event's fields, or the first that is wrong (by name), the time judged against `now`. */
function fieldsOf(raw: Json, now: Date): Fields | Refusal {
  const resourceId = str(raw["resourceId"]) ?? str(raw["resourceUri"]);
  if (!resourceId) return refusal("BadArgument", "resourceId", "resourceId (or resourceUri) is required.");
  for (const field of ["planId", "dimension", "effectiveStartTime"] as const)
    if (!str(raw[field])) return refusal("BadArgument", field, `${field} is required and must be a string.`);
  const quantity = raw["quantity"];
  if (typeof quantity !== "number" || !Number.isFinite(quantity) || quantity <= 0)
    return refusal("InvalidQuantity", "quantity", "quantity must be a number greater than 0.");
  const effectiveStartTime = raw["effectiveStartTime"] as string;
  const started = parseTime(effectiveStartTime);
  if (started === undefined)
    return refusal("BadArgument", "effectiveStartTime", "effectiveStartTime is not a date and time.");
  const hour = new Date(Math.floor(started / 3600_000) * 3600_000);
  // The emulator's own rule (the documents do not say): usage cannot be reported before it happens.
  if (hour.getTime() > now.getTime())
    return refusal("BadArgument", "effectiveStartTime", "effectiveStartTime is in the future.");
  if (now.getTime() - hour.getTime() > ACCEPTED_LATENESS_MS)
    return refusal("Expired", "effectiveStartTime", "Usage events older than 24 hours are not accepted.");
  const planId = raw["planId"] as string;
  const dimension = raw["dimension"] as string;
  return { resourceId, planId, dimension, quantity, effectiveStartTime, hour };
}

/** What the resource and its plan say of the event. */
function judge(state: State, f: Fields): Refusal | undefined {
  const key = f.resourceId.toLowerCase();
  if (state.registerUnknown && !state.resources.has(key))
    state.resources.set(key, {
      ...state.registerUnknown,
      dimensions: [...state.registerUnknown.dimensions],
      resourceId: f.resourceId,
    });
  const resource = state.resources.get(key);
  if (!resource)
    return refusal("ResourceNotFound", "resourceId", `No resource ${f.resourceId} is subscribed.`);
  if (resource.active === false)
    return refusal("ResourceNotActive", "resourceId", `The resource ${f.resourceId} is not active.`);
  // Which status a plan the resource is not on gets is the emulator's choice; the documents do not say.
  if (f.planId !== resource.planId)
    return refusal(
      "ResourceNotAuthorized",
      "planId",
      `The resource ${f.resourceId} is not on plan ${f.planId}.`,
    );
  if (!resource.dimensions.includes(f.dimension))
    return refusal("InvalidDimension", "dimension", `Plan ${f.planId} has no dimension ${f.dimension}.`);
  return undefined;
}

/** What the API says of an accepted event. */
function publicView(e: AcceptedUsageEvent): Json {
  return {
    usageEventId: e.usageEventId,
    status: "Accepted",
    messageTime: e.messageTime,
    resourceId: e.resourceId,
    quantity: e.quantity,
    dimension: e.dimension,
    effectiveStartTime: e.effectiveStartTime,
    planId: e.planId,
  };
}

/** The event's own fields, echoed in its result. */
function pick(raw: Json): Json {
  const out: Json = {};
  for (const k of ["resourceId", "resourceUri", "quantity", "dimension", "effectiveStartTime", "planId"])
    if (raw[k] !== undefined) out[k] = raw[k];
  return out;
}

/** ISO 8601; without a zone it is UTC, as the service reads it. */
function parseTime(s: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(s)) return undefined;
  const t = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(s) ? s : `${s}Z`);
  return Number.isNaN(t) ? undefined : t;
}

function badArgument(target: string, message: string): Reply {
  return {
    status: 400,
    body: { code: "BadArgument", message, target, details: [{ code: "BadArgument", target, message }] },
  };
}

function apiError(status: number, code: string, message: string): Reply {
  return { status, body: { code, message } };
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v : undefined;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
