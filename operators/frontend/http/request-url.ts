/** The request's URL, and the scheme and host that links (Location, nextLink) are built on. */
import type { IncomingMessage } from "node:http";
import { header } from "../arm-request.ts";
import { CloudError, CODES } from "../errors.ts";

type UrlRequest = Pick<IncomingMessage, "url" | "headers">;

/** The request URL; one Node cannot parse is the caller's error. */
export function urlOf(req: UrlRequest): URL {
  const url = URL.parse(req.url ?? "/", "https://frontend");
  if (!url)
    throw new CloudError(400, {
      code: CODES.InvalidParameter,
      message: `The request URL '${(req.url ?? "").slice(0, 100)}' could not be parsed.`,
    });
  return url;
}

/** Scheme and host for links: the Referer ARM sends, else this request's own. */
export function baseOf(req: UrlRequest): string {
  const referer = req.headers.referer;
  if (referer && URL.canParse(referer)) return new URL(referer).origin;
  const proto = header(req, "x-forwarded-proto") ?? "https";
  return `${proto}://${req.headers.host ?? "localhost"}`;
}
