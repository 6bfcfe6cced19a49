/**
 * Sign-in (decision 0014): /login starts the OpenID Connect authorisation code flow with PKCE,
 * a state and a nonce, kept in a short sealed cookie; /callback lets openid-client exchange the
 * code and validate the ID token against the issuer's keys, then seals the person's email and
 * groups into the session cookie.
 */
import { randomBytes } from "node:crypto";
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import * as oidc from "openid-client";
import { Agent, fetch as undiciFetch } from "undici";
import { sealSession, openSession, SESSION_COOKIE } from "./session-cookie.ts";

const FLOW_COOKIE = "__Host-hcp-portal-flow";
const FLOW_SECONDS = 600;

export interface SignInOptions {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  /** PEM bundle the issuer's certificate chains to; the system's when absent. */
  issuerCA?: string;
  publicOrigin: string;
  key: Buffer;
  sessionSeconds: number;
  now?: () => number;
}

export const COOKIE_OPTIONS = {
  path: "/",
  secure: true,
  httpOnly: true,
  sameSite: "Lax",
} as const;

/** The issuer's configuration, fetched through the issuer's CA when one is given. */
export async function discoverIssuer(opts: SignInOptions): Promise<oidc.Configuration> {
  const options: oidc.DiscoveryRequestOptions = {};
  if (opts.issuerCA) {
    const dispatcher = new Agent({ connect: { ca: opts.issuerCA } });
    const viaCA: oidc.CustomFetch = (url, init) => undiciFetch(url, { ...init, dispatcher });
    options[oidc.customFetch] = viaCA;
    const config = await oidc.discovery(opts.issuer, opts.clientId, opts.clientSecret, undefined, options);
    config[oidc.customFetch] = viaCA;
    return config;
  }
  return oidc.discovery(opts.issuer, opts.clientId, opts.clientSecret, undefined, options);
}

export function signInRoutes(opts: SignInOptions, config: oidc.Configuration): Hono {
  const now = opts.now ?? Date.now;
  const redirectUri = `${opts.publicOrigin}/callback`;
  const app = new Hono();

  app.get("/login", async (c) => {
    const verifier = oidc.randomPKCECodeVerifier();
    const flow = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier };
    // The flow rides in the session cookie's format, its fields in name/groups' places.
    const sealed = sealSession(opts.key, {
      id: flow.state,
      name: flow.nonce,
      groups: [verifier],
      expiresAt: now() + FLOW_SECONDS * 1000,
    });
    setCookie(c, FLOW_COOKIE, sealed, { ...COOKIE_OPTIONS, maxAge: FLOW_SECONDS });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: "openid email groups profile",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state: flow.state,
      nonce: flow.nonce,
    });
    return c.redirect(url.href);
  });

  app.get("/callback", async (c) => {
    const flow = openSession(opts.key, getCookie(c, FLOW_COOKIE), now());
    deleteCookie(c, FLOW_COOKIE, COOKIE_OPTIONS);
    if (!flow?.groups[0]) return c.text("sign-in expired or started elsewhere: sign in again", 400);
    const current = new URL(c.req.url);
    const callback = new URL(`${redirectUri}${current.search}`);
    try {
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: flow.groups[0],
        expectedState: flow.id,
        expectedNonce: flow.name,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      const email = claims?.["email"];
      if (typeof email !== "string" || !email) {
        return c.text("the ID token has no email claim: ask for the email scope", 400);
      }
      const rawGroups = claims?.["groups"];
      const groups = Array.isArray(rawGroups)
        ? rawGroups.filter((g): g is string => typeof g === "string")
        : [];
      const session = {
        id: randomBytes(16).toString("base64url"),
        name: email,
        groups,
        expiresAt: now() + opts.sessionSeconds * 1000,
      };
      setCookie(c, SESSION_COOKIE, sealSession(opts.key, session), {
        ...COOKIE_OPTIONS,
        maxAge: opts.sessionSeconds,
      });
      return c.redirect("/");
    } catch (err) {
      return c.text(`sign-in failed: ${err instanceof Error ? err.message : String(err)}`, 400);
    }
  });
  return app;
}
