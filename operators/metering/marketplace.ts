/**
 * The Azure Marketplace metering API (metered billing, api-version 2018-08-31) as the exporter
 * meets it: one call sends one batch of at most 25 hourly usage events and gives back, per event,
 * accepted, duplicate, expired or rejected; anything that leaves the outcome unknown (5xx, 429, a
 * timeout, a dropped connection) is thrown as a retryable MeteringError naming the request ID.
 *
 * Exactly once rests on three things: the ledger holds one row per (resource, dimension, hour);
 * the exporter marks a row reported only on accepted or duplicate; and the API accepts at most
 * one event per (resource, dimension, hour). So an unknown outcome is always resolved by sending
 * the same rows again: what got through the first time answers Duplicate.
 *
 * Also here: the same batch in AWS BatchMeterUsage's request shape, for the AWS variant's export.
 */
import type { TokenCredential } from "@azure/identity";
import { randomUUID } from "node:crypto";
import { Agent, errors as undiciErrors, request } from "undici";
import { retryAfterMs } from "../azure/errors.ts";
import { HeldToken } from "../azure/held-token.ts";
import type { SdkTlsSettings } from "../azure/config.ts";

/** Tokens for the metering API: the marketplace's Entra ID application. */
export const MARKETPLACE_SCOPE = "20e940b3-4c77-4b0b-9a53-9e16a1b010a7/.default";
export const MARKETPLACE_ENDPOINT = "https://marketplaceapi.microsoft.com";
export const MARKETPLACE_API_VERSION = "2018-08-31";
/** The batch call's limit; the AWS call has the same. */
export const MAX_EVENTS_PER_BATCH = 25;
const DEFAULT_TIMEOUT_MS = 30_000;

/** One hour of one dimension of one resource, as the ledger holds it. */
export interface UsageEvent {
  /** The SaaS subscription ID or the managed application's resource ID. */
  resourceId: string;
  planId: string;
  dimension: string;
  /** Units in the hour, > 0. */
  quantity: number;
  /** The hour the usage is for: its start, UTC. */
  hour: Date;
}

export type UsageOutcome =
  | { outcome: "accepted"; event: UsageEvent; usageEventId: string }
  /**
   * The API already holds an event for this resource, dimension and hour. The ledger sends only
   * one quantity per key, so that event is ours, from an attempt whose answer was lost (timeout,
   * dropped connection, a crash between export and mark): the hour counts as reported. Treating it
   * as a failure would leave the row unreported forever, and no re-send could ever succeed.
   * `sameQuantity` false means the API billed another quantity than the ledger holds (a ledger row
   * changed after it was first sent): still reported, but worth an alert.
   */
  | { outcome: "duplicate"; event: UsageEvent; usageEventId?: string; sameQuantity: boolean }
  /** Older than the API accepts (24 hours): never billable; recorded unreported with this reason. */
  | { outcome: "expired"; event: UsageEvent }
  /** Refused for good (ResourceNotFound, ResourceNotActive, InvalidDimension, ...): sending again will not help. */
  | { outcome: "rejected"; event: UsageEvent; code: string; message: string };

export type MeteringFailure = "server" | "throttled" | "timeout" | "connection" | "token" | "refused";

/** A call whose events' fate is unknown (`retryable`: send them again) or a request the API refused whole. */
export class MeteringError extends Error {
  override readonly name = "MeteringError";
  readonly failure: MeteringFailure;
  readonly retryable: boolean;
  /** The x-ms-requestid of the call. */
  readonly requestId: string;
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  readonly code: string | undefined;
  /** From Retry-After on a 429 (or a 503 carrying one). */
  readonly retryAfterMs: number | undefined;

  constructor(o: {
    failure: MeteringFailure;
    requestId: string;
    message: string;
    status?: number;
    code?: string | undefined;
    retryAfterMs?: number | undefined;
  }) {
    super(o.message);
    this.failure = o.failure;
    this.retryable = o.failure !== "refused";
    this.requestId = o.requestId;
    this.status = o.status ?? 0;
    this.code = o.code;
    this.retryAfterMs = o.retryAfterMs;
  }
}

export interface MarketplaceClientOptions {
  credential: TokenCredential;
  /** Default MARKETPLACE_ENDPOINT; an emulator's in tests. */
  endpoint?: string;
  /** Trust for the endpoint (an emulator's CA); default Node's roots. */
  tls?: SdkTlsSettings;
  /** Per call, token included. Default 30 s. */
  timeoutMs?: number;
}

export interface ReportOptions {
  signal?: AbortSignal;
  /** Ties the calls of one export run together (x-ms-correlationid). */
  correlationId?: string;
}

export class MarketplaceMeteringClient {
  readonly #heldToken: HeldToken;
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #agent: Agent;

  constructor(opts: MarketplaceClientOptions) {
    const endpoint = (opts.endpoint ?? MARKETPLACE_ENDPOINT).replace(/\/+$/, "");
    if (!endpoint.startsWith("https://"))
      throw new TypeError(
        `marketplace client: endpoint ${endpoint} must be https (it carries bearer tokens)`,
      );
    this.#url = `${endpoint}/api/batchUsageEvent?api-version=${MARKETPLACE_API_VERSION}`;
    this.#heldToken = new HeldToken(opts.credential, MARKETPLACE_SCOPE);
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#agent = new Agent({ ...(opts.tls ? { connect: { secureContext: opts.tls.secureContext } } : {}) });
  }

  /**
   * Sends `events` (1 to 25, at most one per resource, dimension and hour) in one request; the
   * outcomes are in the events' order. A longer list is refused before any request rather than
   * split: one call is one request with one request ID, so an error always means "this batch,
   * unknown" and never "some of it went".
   */
  async report(events: readonly UsageEvent[], opts: ReportOptions = {}): Promise<UsageOutcome[]> {
    checkBatch(events);
    const requestId = randomUUID();
    const signal = opts.signal
      ? AbortSignal.any([opts.signal, AbortSignal.timeout(this.#timeoutMs)])
      : AbortSignal.timeout(this.#timeoutMs);
    const token = await this.#token(requestId, signal, opts.signal);
    const reply = await this.#post(events, { token, requestId, signal, opts });
    return interpret(events, requestId, reply);
  }

  async #token(requestId: string, signal: AbortSignal, caller?: AbortSignal): Promise<string> {
    try {
      const got = await this.#heldToken.get(signal);
      if (!got) throw new Error("the credential gave no token");
      return got.token;
    } catch (err) {
      if (caller?.aborted) throw err;
      throw failed(requestId, "token", `no token for ${MARKETPLACE_SCOPE}: ${message(err)}`);
    }
  }

  async #post(
    events: readonly UsageEvent[],
    c: { token: string; requestId: string; signal: AbortSignal; opts: ReportOptions },
  ): Promise<Reply> {
    try {
      const res = await request(this.#url, {
        method: "POST",
        dispatcher: this.#agent,
        signal: c.signal,
        headers: {
          authorization: `Bearer ${c.token}`,
          "content-type": "application/json",
          "x-ms-requestid": c.requestId,
          "x-ms-correlationid": c.opts.correlationId ?? c.requestId,
        },
        body: JSON.stringify({ request: events.map(wireEvent) }),
      });
      return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
    } catch (err) {
      if (c.opts.signal?.aborted) throw err;
      if (c.signal.aborted) throw failed(c.requestId, "timeout", `no answer within ${this.#timeoutMs} ms`);
      const why = `the connection failed before an answer: ${networkMessage(err)}`;
      throw failed(c.requestId, "connection", why);
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function failed(
  requestId: string,
  failure: MeteringFailure,
  why: string,
  extra: { status?: number; code?: string | undefined; retryAfterMs?: number | undefined } = {},
): MeteringError {
  return new MeteringError({
    failure,
    requestId,
    message: `marketplace metering (request ${requestId}): ${why}`,
    ...extra,
  });
}

/** A 200's outcomes, or the error a status means: 429 and 5xx retryable, any other refused. */
function interpret(events: readonly UsageEvent[], requestId: string, reply: Reply): UsageOutcome[] {
  const { status, text } = reply;
  const body = parseJson(text);
  if (status === 200) {
    const outcomes = body === undefined ? "a 200 answer without a JSON body" : outcomesOf(events, body);
    if (typeof outcomes === "string") throw failed(requestId, "server", outcomes, { status });
    return outcomes;
  }
  const code = isObject(body) ? str(body["code"]) : undefined;
  const said = (isObject(body) ? str(body["message"]) : undefined) ?? text.slice(0, 200);
  const why = `HTTP ${status}${code ? ` ${code}` : ""}: ${said}`;
  if (status !== 429 && status < 500) throw failed(requestId, "refused", why, { status, code });
  const after = retryAfterMs((name) => first(reply.headers[name]));
  const failure = status === 429 ? "throttled" : "server";
  throw failed(requestId, failure, why, { status, code, retryAfterMs: after });
}

export interface RetryOptions extends ReportOptions {
  /** Attempts in all. Default 4. */
  maxAttempts?: number;
  /** First delay after a 5xx, doubled each time (Retry-After wins when given). Default 1 s. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Waits; tests pass one that records the delay and returns at once. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * `report` again after a retryable failure, waiting Retry-After when the API names one. Sending
 * the same events again is safe (see UsageOutcome's duplicate). The last failure is thrown.
 */
export async function reportWithRetries(
  client: Pick<MarketplaceMeteringClient, "report">,
  events: readonly UsageEvent[],
  opts: RetryOptions = {},
): Promise<UsageOutcome[]> {
  const attempts = opts.maxAttempts ?? 4;
  const base = opts.baseDelayMs ?? 1000;
  const sleep = opts.sleep ?? defaultSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.report(events, opts);
    } catch (err) {
      if (!(err instanceof MeteringError) || !err.retryable || attempt >= attempts) throw err;
      const backoff = Math.min(base * 2 ** (attempt - 1), opts.maxDelayMs ?? 60_000);
      await sleep(err.retryAfterMs ?? backoff, opts.signal);
    }
  }
}

/** Splits a list into batches the API takes. */
export function batchesOf<T>(items: readonly T[], size = MAX_EVENTS_PER_BATCH): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The duplicate rule's key. */
export function usageKey(e: Pick<UsageEvent, "resourceId" | "dimension" | "hour">): string {
  return `${e.resourceId.toLowerCase()}|${e.dimension}|${hourOf(e.hour.getTime())}`;
}

/**
 * Refuses what the API must not see: an empty or too long batch, a bad field, and two events of
 * one key (the API would answer the second Duplicate, and that would read as "already reported"
 * for a quantity it never billed).
 */
export function checkBatch(events: readonly UsageEvent[]): void {
  if (events.length === 0) throw new RangeError("marketplace metering: a batch needs at least one event");
  if (events.length > MAX_EVENTS_PER_BATCH)
    throw new RangeError(
      `marketplace metering: a batch takes at most ${MAX_EVENTS_PER_BATCH} events, not ${events.length} (split it with batchesOf)`,
    );
  const seen = new Map<string, number>();
  events.forEach((e, i) => {
    const where = `marketplace metering: events[${i}]`;
    for (const field of ["resourceId", "planId", "dimension"] as const)
      if (typeof e[field] !== "string" || e[field].trim() === "")
        throw new TypeError(`${where}.${field} must be a non-empty string`);
    if (typeof e.quantity !== "number" || !Number.isFinite(e.quantity) || e.quantity <= 0)
      throw new TypeError(`${where}.quantity must be a finite number > 0, not ${String(e.quantity)}`);
    if (!(e.hour instanceof Date) || Number.isNaN(e.hour.getTime()))
      throw new TypeError(`${where}.hour must be a valid Date`);
    const key = usageKey(e);
    const before = seen.get(key);
    if (before !== undefined)
      throw new TypeError(`${where} has the resource, dimension and hour of events[${before}] (${key})`);
    seen.set(key, i);
  });
}

function wireEvent(e: UsageEvent): Record<string, string | number> {
  return {
    resourceId: e.resourceId,
    quantity: e.quantity,
    dimension: e.dimension,
    effectiveStartTime: hourOf(e.hour.getTime()),
    planId: e.planId,
  };
}

/** The outcomes in the events' order, matched by key (the answer's order is not promised); a string says what is wrong. */
function outcomesOf(events: readonly UsageEvent[], body: unknown): UsageOutcome[] | string {
  const results = isObject(body) ? body["result"] : undefined;
  if (!Array.isArray(results)) return "a 200 answer without a result list";
  const byKey = new Map<string, Record<string, unknown>>();
  for (const r of results) {
    if (!isObject(r)) continue;
    const resource = str(r["resourceId"]) ?? str(r["resourceUri"]);
    const dimension = str(r["dimension"]);
    const start = parseTime(r["effectiveStartTime"]);
    if (resource && dimension && start !== undefined)
      byKey.set(`${resource.toLowerCase()}|${dimension}|${hourOf(start)}`, r);
  }
  const out: UsageOutcome[] = [];
  for (const [i, event] of events.entries()) {
    const r = byKey.get(usageKey(event));
    if (!r) return `the answer has no result for events[${i}] (${usageKey(event)})`;
    out.push(outcomeOf(event, r));
  }
  return out;
}

function outcomeOf(event: UsageEvent, r: Record<string, unknown>): UsageOutcome {
  const status = str(r["status"]) ?? "";
  const error = isObject(r["error"]) ? r["error"] : {};
  if (status === "Accepted")
    return { outcome: "accepted", event, usageEventId: str(r["usageEventId"]) ?? "" };
  if (status === "Duplicate") return duplicateOf(event, error);
  if (status === "Expired") return { outcome: "expired", event };
  return {
    outcome: "rejected",
    event,
    code: status || "Unknown",
    message: str(error["message"]) ?? `status ${status || "(none)"} without a message`,
  };
}

/** The original event comes back in the error's additionalInfo.acceptedMessage. */
function duplicateOf(event: UsageEvent, error: Record<string, unknown>): UsageOutcome {
  const info = isObject(error["additionalInfo"]) ? error["additionalInfo"] : {};
  const original = isObject(info["acceptedMessage"]) ? info["acceptedMessage"] : {};
  const originalId = str(original["usageEventId"]);
  const billed = original["quantity"];
  return {
    outcome: "duplicate",
    event,
    ...(originalId ? { usageEventId: originalId } : {}),
    sameQuantity: typeof billed !== "number" || billed === event.quantity,
  };
}

/** AWS BatchMeterUsage's request as its JSON protocol carries it (Timestamp in epoch seconds). */
export interface AwsBatchMeterUsageRequest {
  ProductCode: string;
  UsageRecords: AwsUsageRecord[];
}

export type AwsCustomer = { CustomerIdentifier: string } | { CustomerAWSAccountID: string };

export type AwsUsageRecord = AwsCustomer & { Timestamp: number; Dimension: string; Quantity: number };

/** How late AWS takes a record. */
export const AWS_ACCEPTED_LATENESS_MS = 6 * 3600_000;

/**
 * Renders a batch for BatchMeterUsage. AWS wants whole units, so a fractional quantity is an
 * error naming the event (rounding would bill what the ledger does not hold). Events older than
 * AWS takes are left out and listed in `late`, for the ledger to record unreported with that reason.
 */
export function toBatchMeterUsage(
  events: readonly UsageEvent[],
  opts: { productCode: string; customerOf: (e: UsageEvent) => AwsCustomer; now: Date },
): { request: AwsBatchMeterUsageRequest; late: UsageEvent[] } {
  checkBatch(events);
  if (opts.productCode.trim() === "") throw new TypeError("BatchMeterUsage: productCode must be non-empty");
  const late: UsageEvent[] = [];
  const records: AwsUsageRecord[] = [];
  events.forEach((e, i) => {
    if (!Number.isInteger(e.quantity) || e.quantity > 2_147_483_647)
      throw new TypeError(
        `BatchMeterUsage: events[${i}].quantity ${e.quantity} is not a whole number AWS takes (0 to 2147483647)`,
      );
    if (opts.now.getTime() - e.hour.getTime() >= AWS_ACCEPTED_LATENESS_MS) return void late.push(e);
    records.push({
      ...opts.customerOf(e),
      Timestamp: Math.floor(e.hour.getTime() / 3600_000) * 3600,
      Dimension: e.dimension,
      Quantity: e.quantity,
    });
  });
  return { request: { ProductCode: opts.productCode, UsageRecords: records }, late };
}

function hourOf(ms: number): string {
  return new Date(Math.floor(ms / 3600_000) * 3600_000).toISOString();
}

/** ISO 8601; the API writes times without a zone, meaning UTC. */
function parseTime(v: unknown): number | undefined {
  if (typeof v !== "string") return undefined;
  const t = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(v) ? v : `${v}Z`);
  return Number.isNaN(t) ? undefined : t;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function networkMessage(err: unknown): string {
  if (err instanceof undiciErrors.UndiciError && "code" in err) return `${String(err.code)} ${err.message}`;
  return message(err);
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      },
      { once: true },
    );
  });
}
