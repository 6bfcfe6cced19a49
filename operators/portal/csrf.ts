/**
 * CSRF defence for every POST (decision 0014): a synchronizer token derived from the session's
 * random ID with the server key (so it needs no storage and dies with the session), and the
 * request's Origin must be the portal's own.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export function csrfToken(key: Buffer, sessionId: string): string {
  return createHmac("sha256", key).update(`csrf:${sessionId}`).digest("base64url");
}

export function csrfValid(key: Buffer, sessionId: string, token: unknown): boolean {
  if (typeof token !== "string") return false;
  const want = Buffer.from(csrfToken(key, sessionId));
  const got = Buffer.from(token);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** A missing Origin is refused too: every browser we support sends it on a POST. */
export function originValid(origin: string | undefined, publicOrigin: string): boolean {
  return origin === publicOrigin;
}
