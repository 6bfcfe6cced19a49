/**
 * Fault injection and the request log. A fault matches requests by method and path, fires a set
 * number of times (then expires) and counts its hits. Request faults answer instead of the
 * emulator (429, 5xx, a user-fixable error) or delay or hold the request; operation faults act on
 * the asynchronous operation a matching PUT or DELETE starts (held InProgress, or Failed).
 */
import { cloudError, type ArmReply } from "./http.ts";

export interface RequestMatch {
  /** One method or several, case-insensitive; omitted or "*" matches any. */
  method?: string | string[];
  /** A case-insensitive substring of the URL path (no query), or a RegExp tested on the path. */
  path?: string | RegExp;
}

export interface FaultHandle {
  /** Requests (or operations) this fault has acted on so far. */
  readonly hits: number;
  /** How many more times it fires; 0 once expired or cleared. */
  readonly remaining: number;
  /** Removes the fault; a hold fault also lets go of what it holds. */
  clear(): void;
}

export interface HoldHandle extends FaultHandle {
  /** Requests or operations waiting on this fault right now. */
  readonly held: number;
  /** Lets everything held go on and stops holding new ones. */
  release(): void;
}

export interface ErrorFault {
  status: number;
  code: string;
  message: string;
  /** Default 1. */
  times?: number;
}

/** Errors a user can fix, as ARM words them; pass to `faults.error(match, USER_ERRORS.x)`. */
export const USER_ERRORS = {
  quotaExceeded: {
    status: 400,
    code: "QuotaExceeded",
    message:
      "Operation could not be completed as it results in exceeding approved Total Regional Public IP Addresses quota. Current Limit: 10, Current Usage: 10, Additional Required: 1.",
  },
  invalidSubnet: {
    status: 400,
    code: "InvalidSubnet",
    message: "The subnet referenced by the frontend IP configuration does not exist or is not usable.",
  },
  authorizationFailed: {
    status: 403,
    code: "AuthorizationFailed",
    message:
      "The client does not have authorization to perform action 'Microsoft.Network/publicIPAddresses/write' over the scope or the scope is invalid. If access was recently granted, please refresh your credentials.",
  },
} as const satisfies Record<string, ErrorFault>;

export interface FaultInjector {
  /** Delays matching requests by `ms` before anything else happens (default: every time). */
  latency(match: RequestMatch, ms: number, opts?: { times?: number }): FaultHandle;
  /** 429 TooManyRequests, with Retry-After (seconds) or retry-after-ms when given. Default once. */
  throttle(
    match: RequestMatch,
    opts?: { times?: number; retryAfterSeconds?: number; retryAfterMs?: number },
  ): FaultHandle;
  /** 500 (or `status`: 502, 503, 504) with an ARM error body. Default once. */
  serverError(
    match: RequestMatch,
    opts?: { times?: number; status?: number; code?: string; retryAfterSeconds?: number },
  ): FaultHandle;
  /** Any CloudError, e.g. USER_ERRORS.quotaExceeded. Default once. */
  error(match: RequestMatch, fault: ErrorFault): FaultHandle;
  /** Matching requests get no answer until released (default: every one until then). */
  hangRequest(match: RequestMatch, opts?: { times?: number }): HoldHandle;
  /** Asynchronous operations started by matching requests stay InProgress until released. */
  hangOperation(match: RequestMatch, opts?: { times?: number }): HoldHandle;
  /** Asynchronous operations started by matching requests end Failed with this error. Default once. */
  failOperation(match: RequestMatch, opts: { code: string; message: string; times?: number }): FaultHandle;
  /** Removes every fault and releases everything held. */
  clear(): void;
}

export interface RequestLogEntry {
  seq: number;
  method: string;
  path: string;
  /** 0 while the request has not been answered. */
  status: number;
  /** ARM error code of the reply, when it was an error. */
  code?: string;
  /** Whether a fault produced the reply. */
  injected: boolean;
}

export function matches(match: RequestMatch, method: string, path: string): boolean {
  const methods = match.method === undefined ? [] : [match.method].flat();
  const methodOk =
    methods.length === 0 || methods.some((m) => m === "*" || m.toUpperCase() === method.toUpperCase());
  if (!methodOk) return false;
  if (match.path === undefined) return true;
  if (typeof match.path === "string") return path.toLowerCase().includes(match.path.toLowerCase());
  match.path.lastIndex = 0;
  return match.path.test(path);
}

type Kind = "latency" | "reply" | "holdRequest" | "holdOperation" | "failOperation";

interface Fault {
  kind: Kind;
  match: RequestMatch;
  remaining: number;
  hits: number;
  reply?: () => ArmReply;
  latencyMs?: number;
  failure?: { code: string; message: string };
  hold?: Hold;
}

/** A gate that held requests or operations wait on. */
class Hold {
  #released = false;
  readonly #waiters = new Set<() => void>();

  get held(): number {
    return this.#waiters.size;
  }

  get released(): boolean {
    return this.#released;
  }

  wait(): Promise<void> {
    if (this.#released) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.#waiters.delete(done);
        resolve();
      };
      this.#waiters.add(done);
    });
  }

  release(): void {
    this.#released = true;
    for (const waiter of [...this.#waiters]) waiter();
  }
}

/** What an asynchronous operation should do, decided when the request that starts it arrives. */
export interface OperationFault {
  hold?: Promise<void>;
  failure?: { code: string; message: string };
}

export class Faults implements FaultInjector {
  #faults: Fault[] = [];

  latency(match: RequestMatch, ms: number, opts: { times?: number } = {}): FaultHandle {
    return this.#add({ kind: "latency", match, latencyMs: ms }, opts.times ?? Infinity);
  }

  throttle(
    match: RequestMatch,
    opts: { times?: number; retryAfterSeconds?: number; retryAfterMs?: number } = {},
  ): FaultHandle {
    const reply = (): ArmReply => {
      const r = cloudError(
        429,
        "TooManyRequests",
        "The request is being throttled as the limit has been reached for operation type - Write_ObservationWindow_00:05:00.",
      );
      const headers: Record<string, string> = {};
      if (opts.retryAfterSeconds !== undefined) headers["retry-after"] = String(opts.retryAfterSeconds);
      if (opts.retryAfterMs !== undefined) headers["retry-after-ms"] = String(opts.retryAfterMs);
      return { ...r, headers };
    };
    return this.#add({ kind: "reply", match, reply }, opts.times ?? 1);
  }

  serverError(
    match: RequestMatch,
    opts: { times?: number; status?: number; code?: string; retryAfterSeconds?: number } = {},
  ): FaultHandle {
    const status = opts.status ?? 500;
    const code = opts.code ?? (status === 503 ? "ServiceUnavailable" : "InternalServerError");
    const reply = (): ArmReply => {
      const r = cloudError(
        status,
        code,
        "Encountered internal server error. Diagnostic information: injected.",
      );
      if (opts.retryAfterSeconds === undefined) return r;
      return { ...r, headers: { "retry-after": String(opts.retryAfterSeconds) } };
    };
    return this.#add({ kind: "reply", match, reply }, opts.times ?? 1);
  }

  error(match: RequestMatch, fault: ErrorFault): FaultHandle {
    const reply = (): ArmReply => cloudError(fault.status, fault.code, fault.message);
    return this.#add({ kind: "reply", match, reply }, fault.times ?? 1);
  }

  hangRequest(match: RequestMatch, opts: { times?: number } = {}): HoldHandle {
    return this.#addHold("holdRequest", match, opts.times ?? Infinity);
  }

  hangOperation(match: RequestMatch, opts: { times?: number } = {}): HoldHandle {
    return this.#addHold("holdOperation", match, opts.times ?? Infinity);
  }

  failOperation(match: RequestMatch, opts: { code: string; message: string; times?: number }): FaultHandle {
    const failure = { code: opts.code, message: opts.message };
    return this.#add({ kind: "failOperation", match, failure }, opts.times ?? 1);
  }

  clear(): void {
    for (const fault of this.#faults) fault.hold?.release();
    this.#faults = [];
  }

  /** Milliseconds to delay a request by (the first matching latency fault). */
  takeLatency(method: string, path: string): number {
    return this.#take("latency", method, path)?.latencyMs ?? 0;
  }

  /** A promise to wait on when a hang fault matches; undefined otherwise. */
  takeRequestHold(method: string, path: string): Promise<void> | undefined {
    return this.#take("holdRequest", method, path)?.hold?.wait();
  }

  /** The reply an error fault gives instead of the emulator, if any matches. */
  takeReply(method: string, path: string): ArmReply | undefined {
    return this.#take("reply", method, path)?.reply?.();
  }

  /** Decided when a request starts an asynchronous operation. */
  takeOperationFault(method: string, path: string): OperationFault {
    const hold = this.#take("holdOperation", method, path)?.hold?.wait();
    const failure = this.#take("failOperation", method, path)?.failure;
    return { ...(hold ? { hold } : {}), ...(failure ? { failure } : {}) };
  }

  #take(kind: Kind, method: string, path: string): Fault | undefined {
    const fault = this.#faults.find(
      (f) => f.kind === kind && f.remaining > 0 && matches(f.match, method, path),
    );
    if (!fault) return undefined;
    fault.hits++;
    fault.remaining--;
    if (fault.remaining <= 0 && !fault.hold) this.#faults = this.#faults.filter((f) => f !== fault);
    return fault;
  }

  #add(fault: Omit<Fault, "remaining" | "hits">, times: number): FaultHandle {
    const entry: Fault = { ...fault, remaining: times, hits: 0 };
    this.#faults.push(entry);
    return {
      get hits() {
        return entry.hits;
      },
      get remaining() {
        return Math.max(0, entry.remaining);
      },
      clear: () => this.#remove(entry),
    };
  }

  #addHold(kind: "holdRequest" | "holdOperation", match: RequestMatch, times: number): HoldHandle {
    const hold = new Hold();
    const entry: Fault = { kind, match, remaining: times, hits: 0, hold };
    this.#faults.push(entry);
    return {
      get hits() {
        return entry.hits;
      },
      get remaining() {
        return hold.released ? 0 : Math.max(0, entry.remaining);
      },
      get held() {
        return hold.held;
      },
      release: () => this.#remove(entry),
      clear: () => this.#remove(entry),
    };
  }

  #remove(entry: Fault): void {
    entry.remaining = 0;
    entry.hold?.release();
    this.#faults = this.#faults.filter((f) => f !== entry);
  }
}

/** Every request the emulator received, in arrival order. */
export class RequestLog {
  #entries: RequestLogEntry[] = [];
  #seq = 0;

  start(method: string, path: string): RequestLogEntry {
    const entry: RequestLogEntry = { seq: ++this.#seq, method, path, status: 0, injected: false };
    this.#entries.push(entry);
    return entry;
  }

  list(match: RequestMatch = {}): RequestLogEntry[] {
    return this.#entries.filter((e) => matches(match, e.method, e.path)).map((e) => ({ ...e }));
  }

  clear(): void {
    this.#entries = [];
  }
}
