/**
 * The gate's authentication: `Authorization: Bearer <OIDC ID token>`, its signature checked
 * against the issuer's JWKS (found through its discovery document), its issuer, audience (one of
 * the allowed client IDs) and lifetime checked, and the user taken from one claim (email by
 * default) to compare with the session's owner.
 */
import { createRemoteJWKSet, customFetch, jwtVerify, type JWTVerifyGetKey } from "jose";
import { Agent, fetch as undiciFetch } from "undici";
import type { Authenticate } from "./gate.ts";

export interface OidcOptions {
  issuer: string;
  /** The client IDs whose ID tokens the gate accepts (the token's aud). */
  audiences: string[];
  /** PEM CA bundle the issuer's certificate chains to; the system's roots when absent. */
  caPem?: string;
  /** The claim naming the user. Default `email`. */
  userClaim?: string;
}

type Fetch = (
  url: string,
  init?: { headers?: Record<string, string>; signal?: AbortSignal },
) => Promise<Response>;

function fetcher(caPem: string | undefined): Fetch {
  const dispatcher = caPem ? new Agent({ connect: { ca: caPem } }) : undefined;
  return async (url, init) => await undiciFetch(url, { ...init, ...(dispatcher ? { dispatcher } : {}) });
}

/** The issuer's jwks_uri from its discovery document, which must name the same issuer. */
async function discoverJwksUri(issuer: string, fetch: Fetch): Promise<URL> {
  const url = `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`the OIDC discovery document ${url} answered ${res.status}`);
  const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
  if (doc.issuer !== issuer)
    throw new Error(`the OIDC discovery document names issuer ${String(doc.issuer)}, not ${issuer}`);
  if (typeof doc.jwks_uri !== "string") throw new Error(`the OIDC discovery document ${url} has no jwks_uri`);
  return new URL(doc.jwks_uri);
}

export function oidcAuthenticator(opts: OidcOptions): Authenticate {
  if (opts.audiences.length === 0)
    throw new Error("the gate needs at least one OIDC audience (--gate-oidc-audience)");
  const fetch = fetcher(opts.caPem);
  const userClaim = opts.userClaim ?? "email";
  // Discovered at the first request and again after a failure, so a late issuer is no crash.
  let keys: Promise<JWTVerifyGetKey> | undefined;
  const getKeys = (): Promise<JWTVerifyGetKey> => {
    if (keys) return keys;
    const discovered = discoverJwksUri(opts.issuer, fetch).then((uri) =>
      createRemoteJWKSet(uri, { [customFetch]: fetch as never }),
    );
    discovered.catch(() => {
      if (keys === discovered) keys = undefined;
    });
    return (keys = discovered);
  };
  return async (authorization) => {
    const token = /^Bearer ([^\s]+)$/i.exec(authorization ?? "")?.[1];
    if (!token) return { error: "a bearer token (an OIDC ID token) is required" };
    try {
      const { payload } = await jwtVerify(token, await getKeys(), {
        issuer: opts.issuer,
        audience: opts.audiences,
      });
      const user = payload[userClaim];
      if (typeof user !== "string" || user === "") return { error: `the ID token has no ${userClaim} claim` };
      return { user };
    } catch (err) {
      return { error: `the ID token is not valid: ${err instanceof Error ? err.message : String(err)}` };
    }
  };
}
