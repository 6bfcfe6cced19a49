/** The request a handler sees after the router's middleware, and the reply it returns. */
import type { IncomingHttpHeaders } from "node:http";
import type { Logger } from "../runtime/logger.ts";
import type { ApiVersion } from "./api/registry.ts";
import type { JsonObject } from "./api/json.ts";
import type { Subscription } from "./handlers/subscriptions.ts";
import type { ResourceId } from "./resource-id.ts";

export interface ArmRequest {
  method: string;
  /** The path with the caller's casing. */
  path: string;
  query: URLSearchParams;
  /** Path parameters with the caller's casing. */
  params: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; undefined when there was none. */
  body: unknown;
  /** The served api-version the request names; on routes that serve none, the newest (unread there). */
  apiVersion: ApiVersion;
  /** The cluster, node pool or external auth the path names, its names checked (http/names.ts). */
  resource?: ResourceId;
  /** Scheme and host for links (Location, Azure-AsyncOperation, nextLink), from Referer or the request. */
  base: string;
  requestId: string;
  correlationRequestId?: string;
  clientRequestId?: string;
  /** X-Ms-Arm-Resource-System-Data, parsed; createdAt defaults to now. */
  systemData?: JsonObject;
  /** Set on routes that check the subscription's state. */
  subscription?: Subscription;
  log: Logger;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export function header(req: Pick<ArmRequest, "headers">, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}
