/**
 * Asynchronous operations the way ARM runs them: the PUT or DELETE is answered at once (201/202)
 * with an Azure-AsyncOperation and/or Location header; the change lands after a delay (or when a
 * hang fault lets go); the status URL says InProgress, then Succeeded or Failed with an error; the
 * Location URL answers 202 until done, then the final result.
 */
import { randomUUID } from "node:crypto";
import { cloudError, noContent, ok, type ArmReply } from "./http.ts";
import type { OperationFault } from "./faults.ts";

export type OperationStatus = "InProgress" | "Succeeded" | "Failed";

export interface OperationError {
  code: string;
  message: string;
}

/** Which resource provider's URL shapes the operation uses. */
export type OperationStyle =
  { kind: "network"; location: string } | { kind: "dns"; resourceGroup: string } | { kind: "resources" };

export interface StartOperation {
  subscriptionId: string;
  style: OperationStyle;
  apiVersion: string;
  fault: OperationFault;
  /** Applies the change once the operation succeeds. */
  complete: () => void;
  /** Records a failure on the resource. */
  fail: (error: OperationError) => void;
  /** What the Location URL answers once the operation has succeeded. */
  result: () => ArmReply;
}

export interface AsyncOperation {
  id: string;
  subscriptionId: string;
  status: OperationStatus;
  error?: OperationError;
  startTime: string;
  endTime?: string;
  /** Headers for the 201/202 that started the operation. */
  headers: Record<string, string>;
  result: () => ArmReply;
}

export class AsyncOperations {
  readonly #endpoint: string;
  readonly #delayMs: number;
  readonly #ops = new Map<string, AsyncOperation>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #stopped = false;

  constructor(endpoint: string, delayMs: number) {
    this.#endpoint = endpoint;
    this.#delayMs = delayMs;
  }

  start(opts: StartOperation): AsyncOperation {
    const id = randomUUID();
    const op: AsyncOperation = {
      id,
      subscriptionId: opts.subscriptionId,
      status: "InProgress",
      startTime: new Date().toISOString(),
      headers: this.#headers(id, opts),
      result: opts.result,
    };
    this.#ops.set(id, op);
    void this.#run(op, opts);
    return op;
  }

  get(subscriptionId: string, id: string): AsyncOperation | undefined {
    const op = this.#ops.get(id.toLowerCase());
    return op && op.subscriptionId.toLowerCase() === subscriptionId.toLowerCase() ? op : undefined;
  }

  /** The Azure-AsyncOperation URL's answer. */
  statusReply(op: AsyncOperation): ArmReply {
    return ok({
      id: op.id,
      name: op.id,
      status: op.status,
      startTime: op.startTime,
      ...(op.endTime ? { endTime: op.endTime } : {}),
      ...(op.error ? { error: { code: op.error.code, message: op.error.message } } : {}),
    });
  }

  /** The Location URL's answer. */
  locationReply(op: AsyncOperation): ArmReply {
    if (op.status === "InProgress") {
      const location = op.headers["location"];
      return { status: 202, ...(location ? { headers: { location } } : {}) };
    }
    if (op.status === "Failed") {
      const error = op.error ?? { code: "InternalServerError", message: "The operation failed." };
      return cloudError(400, error.code, error.message);
    }
    return op.result();
  }

  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  async #run(op: AsyncOperation, opts: StartOperation): Promise<void> {
    if (opts.fault.hold) await opts.fault.hold;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, this.#delayMs);
      this.#timers.add(timer);
    });
    if (this.#stopped) return;
    op.endTime = new Date().toISOString();
    if (opts.fault.failure) {
      op.status = "Failed";
      op.error = opts.fault.failure;
      opts.fail(opts.fault.failure);
      return;
    }
    opts.complete();
    op.status = "Succeeded";
  }

  #headers(id: string, opts: StartOperation): Record<string, string> {
    const sub = `${this.#endpoint}/subscriptions/${opts.subscriptionId}`;
    const q = `?api-version=${encodeURIComponent(opts.apiVersion)}`;
    const style = opts.style;
    switch (style.kind) {
      case "network": {
        const base = `${sub}/providers/Microsoft.Network/locations/${style.location}`;
        return {
          "azure-asyncoperation": `${base}/operations/${id}${q}`,
          location: `${base}/operationResults/${id}${q}`,
        };
      }
      case "dns": {
        const base = `${sub}/resourceGroups/${style.resourceGroup}/providers/Microsoft.Network`;
        return {
          "azure-asyncoperation": `${base}/dnsOperationStatuses/${id}${q}`,
          location: `${base}/dnsOperationResults/${id}${q}`,
        };
      }
      case "resources":
        return { location: `${sub}/operationresults/${id}${q}` };
    }
  }
}

/** The final reply of a finished DELETE polled through its Location URL. */
export function deletedReply(status: 200 | 204): () => ArmReply {
  return () => (status === 204 ? noContent() : { status: 200 });
}
