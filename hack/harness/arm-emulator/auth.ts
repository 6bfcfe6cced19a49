/**
 * The Entra ID side of the emulator: the endpoints MSAL (under @azure/identity) asks for with the
 * emulator as authority host, the client-credentials grant for one service principal, and the
 * bearer-token check in front of every ARM request. Tokens are JWTs signed with a per-run HMAC
 * key, so the emulator checks signature, audience and expiry like ARM does, without a token table.
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { cloudError, header, ok, type ArmReply, type ArmRequest, type JsonObject } from "./http.ts";

export interface ServicePrincipal {
  tenantId: string;
  clientId: string;
  clientSecret: string;
}

interface Claims {
  aud: string;
  iss: string;
  tid: string;
  appid: string;
  oid: string;
  sub: string;
  iat: number;
  nbf: number;
  exp: number;
  ver: string;
}

export type TokenCheck = { ok: true; claims: Claims } | { ok: false; reply: ArmReply };

const OPENID_PATHS = ["v2.0/.well-known/openid-configuration", ".well-known/openid-configuration"];
const TOKEN_PATHS = ["oauth2/v2.0/token", "oauth2/token"];

const base64url = (data: string | Buffer): string => Buffer.from(data).toString("base64url");

/** Audiences ARM accepts besides its own endpoint (what real tokens for ARM carry). */
const armAudiences = ["https://management.azure.com", "https://management.core.windows.net"];

function trimSlash(s: string): string {
  return s.replace(/\/+$/, "");
}

export class TokenAuthority {
  readonly #key: Buffer;
  readonly #endpoint: string;
  readonly #principal: ServicePrincipal;
  readonly #lifetimeSeconds: number;

  constructor(opts: { key: Buffer; endpoint: string; principal: ServicePrincipal; lifetimeSeconds: number }) {
    this.#key = opts.key;
    this.#endpoint = opts.endpoint;
    this.#principal = opts.principal;
    this.#lifetimeSeconds = opts.lifetimeSeconds;
  }

  /** Answers the Entra ID paths; undefined when `req` is not one (then it is an ARM request). */
  handle(req: ArmRequest): ArmReply | undefined {
    const tenant = req.segments[0]?.toLowerCase();
    if (tenant === undefined || tenant === "subscriptions" || tenant === "providers") return undefined;
    const rest = req.segments.slice(1).join("/").toLowerCase();
    if (OPENID_PATHS.includes(rest)) {
      return this.#tenantKnown(tenant) ? ok(this.#openIdConfiguration(tenant)) : this.#unknownTenant(tenant);
    }
    if (TOKEN_PATHS.includes(rest)) {
      if (req.method !== "POST")
        return aadError(405, "invalid_request", 900561, "The endpoint only accepts POST.");
      return this.#tokenRequest(tenant, req);
    }
    if (rest.startsWith("discovery/")) return ok({ keys: [] });
    return undefined;
  }

  /** Checks the bearer token of an ARM request. */
  verify(req: ArmRequest): TokenCheck {
    return this.verifyBearer(header(req, "authorization"), [trimSlash(this.#endpoint), ...armAudiences]);
  }

  /** Checks an Authorization header's bearer token for one of `audiences` (another service's, e.g. storage). */
  verifyBearer(auth: string | undefined, audiences: readonly string[]): TokenCheck {
    if (!auth?.toLowerCase().startsWith("bearer ")) {
      return fail("AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.");
    }
    const claims = this.#decode(auth.slice("bearer ".length).trim());
    if (!claims) {
      return fail("AuthenticationFailed", "Authentication failed. The access token is not valid.");
    }
    if (claims.exp * 1000 <= Date.now()) {
      return fail(
        "ExpiredAuthenticationToken",
        "The access token expiry UTC time is earlier than current UTC time.",
      );
    }
    if (!audiences.includes(trimSlash(claims.aud))) {
      return fail(
        "InvalidAuthenticationTokenAudience",
        `The access token has been obtained for wrong audience or resource '${claims.aud}'.`,
      );
    }
    return { ok: true, claims };
  }

  #tenantKnown(tenant: string): boolean {
    return tenant === this.#principal.tenantId.toLowerCase();
  }

  #openIdConfiguration(tenant: string): JsonObject {
    const base = `${this.#endpoint}/${tenant}`;
    return {
      token_endpoint: `${base}/oauth2/v2.0/token`,
      token_endpoint_auth_methods_supported: ["client_secret_post", "private_key_jwt", "client_secret_basic"],
      jwks_uri: `${base}/discovery/v2.0/keys`,
      response_modes_supported: ["query", "fragment", "form_post"],
      subject_types_supported: ["pairwise"],
      id_token_signing_alg_values_supported: ["RS256"],
      response_types_supported: ["code", "id_token", "code id_token", "id_token token"],
      scopes_supported: ["openid", "profile", "email", "offline_access"],
      issuer: `${base}/v2.0`,
      request_uri_parameter_supported: false,
      userinfo_endpoint: `${base}/openid/userinfo`,
      authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
      device_authorization_endpoint: `${base}/oauth2/v2.0/devicecode`,
      http_logout_supported: true,
      frontchannel_logout_supported: true,
      end_session_endpoint: `${base}/oauth2/v2.0/logout`,
      claims_supported: ["sub", "iss", "aud", "exp", "iat", "nbf", "tid"],
      tenant_region_scope: null,
      cloud_instance_name: "arm-emulator",
      cloud_graph_host_name: "graph.arm-emulator",
      msgraph_host: "graph.arm-emulator",
    };
  }

  #unknownTenant(tenant: string): ArmReply {
    return aadError(
      400,
      "invalid_tenant",
      90002,
      `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
    );
  }

  #tokenRequest(tenant: string, req: ArmRequest): ArmReply {
    if (!this.#tenantKnown(tenant)) return this.#unknownTenant(tenant);
    const form = new URLSearchParams(req.rawBody);
    if (form.get("grant_type") !== "client_credentials") {
      return aadError(400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.");
    }
    const refused = this.#authenticateClient(tenant, form, header(req, "authorization"));
    if (refused) return refused;
    const scope = form.get("scope") ?? "";
    const resource = scope.split(" ").find((s) => s.endsWith("/.default"));
    if (!resource) {
      return aadError(400, "invalid_scope", 1002012, `The provided value for scope ${scope} is not valid.`);
    }
    const expiresIn = this.#lifetimeSeconds;
    return ok({
      token_type: "Bearer",
      expires_in: expiresIn,
      ext_expires_in: expiresIn,
      access_token: this.#sign(resource.slice(0, -"/.default".length), tenant, expiresIn),
    });
  }

  /** client_secret_post or client_secret_basic; the error Entra ID gives when it does not check out. */
  #authenticateClient(tenant: string, form: URLSearchParams, authorization?: string): ArmReply | undefined {
    const basic = basicCredentials(authorization);
    const clientId = form.get("client_id") ?? basic?.id;
    const secret = form.get("client_secret") ?? basic?.secret;
    if (clientId !== this.#principal.clientId) {
      return aadError(
        400,
        "unauthorized_client",
        700016,
        `Application with identifier '${clientId ?? ""}' was not found in the directory '${tenant}'.`,
      );
    }
    if (typeof secret !== "string" || !safeEqual(secret, this.#principal.clientSecret)) {
      return aadError(
        401,
        "invalid_client",
        7000215,
        "Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app.",
      );
    }
    return undefined;
  }

  #sign(audience: string, tenant: string, expiresIn: number): string {
    const now = Math.floor(Date.now() / 1000);
    const claims: Claims = {
      aud: audience,
      iss: `${this.#endpoint}/${tenant}/`,
      tid: this.#principal.tenantId,
      appid: this.#principal.clientId,
      oid: this.#principal.clientId,
      sub: this.#principal.clientId,
      iat: now,
      nbf: now - 300,
      exp: now + expiresIn,
      ver: "1.0",
    };
    const unsigned = `${base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${base64url(JSON.stringify(claims))}`;
    return `${unsigned}.${createHmac("sha256", this.#key).update(unsigned).digest("base64url")}`;
  }

  #decode(token: string): Claims | undefined {
    const [head, payload, signature] = token.split(".");
    if (head === undefined || payload === undefined || signature === undefined) return undefined;
    const expected = createHmac("sha256", this.#key).update(`${head}.${payload}`).digest("base64url");
    if (!safeEqual(signature, expected)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Claims;
      return claims.tid === this.#principal.tenantId ? claims : undefined;
    } catch {
      return undefined;
    }
  }
}

function fail(code: string, message: string): TokenCheck {
  const reply = cloudError(401, code, message);
  const challenge = `Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", error_description="${message.replace(/"/g, "'")}"`;
  return { ok: false, reply: { ...reply, headers: { "www-authenticate": challenge } } };
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function basicCredentials(auth: string | undefined): { id: string; secret: string } | undefined {
  if (!auth?.toLowerCase().startsWith("basic ")) return undefined;
  const decoded = Buffer.from(auth.slice(6).trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return {
    id: decodeURIComponent(decoded.slice(0, colon)),
    secret: decodeURIComponent(decoded.slice(colon + 1)),
  };
}

/** Entra ID's OAuth2 error body, with the AADSTS code in the description as the service writes it. */
function aadError(status: number, error: string, aadsts: number, text: string): ArmReply {
  const traceId = randomUUID();
  const correlationId = randomUUID();
  const timestamp = new Date()
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
  return ok(
    {
      error,
      error_description: `AADSTS${aadsts}: ${text} Trace ID: ${traceId} Correlation ID: ${correlationId} Timestamp: ${timestamp}`,
      error_codes: [aadsts],
      timestamp,
      trace_id: traceId,
      correlation_id: correlationId,
      error_uri: `https://login.microsoftonline.com/error?code=${aadsts}`,
    },
    status,
  );
}
