/**
 * The Azure-AsyncNotificationUri header, hostile input like any other: only an https URI of
 * bounded length, without credentials, on a host of the configured allow-list (ARM's by default;
 * the local region and tests add their receiver's) is taken, anything else is a 400 naming the
 * header. The notifier (notifier.ts) checks it again before each POST, as the list may change.
 */
import { header, type ArmRequest } from "../arm-request.ts";
import { CloudError, CODES } from "../errors.ts";

export const NOTIFICATION_URI_HEADER = "Azure-AsyncNotificationUri";
export const MAX_NOTIFICATION_URI_LENGTH = 2048;

/** ARM's hosts in the public and sovereign clouds: where a production notification may go. */
export const DEFAULT_NOTIFICATION_HOSTS = [
  "management.azure.com",
  "management.usgovcloudapi.net",
  "management.chinacloudapi.cn",
];

export interface NotificationOptions {
  /**
   * Hosts a notification may go to: a URI's host equal to one of these, or ending in "." and one.
   * Default DEFAULT_NOTIFICATION_HOSTS.
   */
  allowedHosts?: string[];
  /** PEM of a CA trusted for notification endpoints besides the system's (a local receiver). */
  ca?: string | Buffer;
  /** POSTs tried before giving up. Default 8. */
  maxAttempts?: number;
  /** Delay after the first failed POST, doubled after each. Default 5 000 ms. */
  firstRetryMs?: number;
  /** Longest delay between POSTs. Default 300 000 ms. */
  maxRetryMs?: number;
  /** One POST's time limit. Default 10 000 ms. */
  timeoutMs?: number;
}

export type ResolvedNotificationOptions = Required<Omit<NotificationOptions, "ca">> &
  Pick<NotificationOptions, "ca">;

export function resolveNotificationOptions(opts: NotificationOptions = {}): ResolvedNotificationOptions {
  const resolved = {
    allowedHosts: (opts.allowedHosts ?? DEFAULT_NOTIFICATION_HOSTS).map((h) => h.toLowerCase()),
    maxAttempts: opts.maxAttempts ?? 8,
    firstRetryMs: opts.firstRetryMs ?? 5_000,
    maxRetryMs: opts.maxRetryMs ?? 300_000,
    timeoutMs: opts.timeoutMs ?? 10_000,
    ...(opts.ca ? { ca: opts.ca } : {}),
  };
  for (const n of ["maxAttempts", "firstRetryMs", "maxRetryMs", "timeoutMs"] as const)
    if (!Number.isFinite(resolved[n]) || resolved[n] <= 0)
      throw new TypeError(`notification option ${n} must be a positive number`);
  return resolved;
}

/** Why a notification URI is refused, or undefined when it may be used. */
export function refusalOf(uri: string, allowedHosts: string[]): string | undefined {
  if (uri.length > MAX_NOTIFICATION_URI_LENGTH)
    return `is longer than ${MAX_NOTIFICATION_URI_LENGTH} characters`;
  const url = URL.parse(uri);
  if (!url) return "is not an absolute URI";
  if (url.protocol !== "https:") return "is not an https URI";
  if (url.username || url.password) return "carries credentials";
  const host = url.hostname.toLowerCase();
  if (!allowedHosts.some((h) => host === h || host.endsWith(`.${h}`)))
    return `names a host that is not allowed ('${host.slice(0, 100)}')`;
  return undefined;
}

/** The request's notification URI, checked; a refused one is a 400 naming the header. */
export function notificationUriOf(req: ArmRequest, allowedHosts: string[]): string | undefined {
  const uri = header(req, NOTIFICATION_URI_HEADER);
  if (uri === undefined) return undefined;
  const refusal = refusalOf(uri, allowedHosts);
  if (!refusal) return uri;
  throw new CloudError(400, {
    code: CODES.InvalidParameter,
    message: `The ${NOTIFICATION_URI_HEADER} header ${refusal}.`,
    target: NOTIFICATION_URI_HEADER,
  });
}
