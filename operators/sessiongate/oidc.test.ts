import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oidcAuthenticator } from "./oidc.ts";

describe("oidcAuthenticator", () => {
  let server: Server;
  let issuer: string;
  let key: CryptoKey;
  let stranger: CryptoKey;

  beforeAll(async () => {
    const pair = await generateKeyPair("ES256");
    key = pair.privateKey;
    stranger = (await generateKeyPair("ES256")).privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
    server = createServer((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/.well-known/openid-configuration")
        return res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/keys` }));
      if (req.url === "/keys") return res.end(JSON.stringify({ keys: [jwk] }));
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const token = (
    claims: Record<string, unknown>,
    opts: { aud?: string; exp?: string; signer?: CryptoKey } = {},
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(issuer)
      .setAudience(opts.aud ?? "hcpctl")
      .setIssuedAt()
      .setExpirationTime(opts.exp ?? "5m")
      .sign(opts.signer ?? key);

  it("takes the user from the email claim of a valid ID token", async () => {
    const authenticate = oidcAuthenticator({ issuer, audiences: ["portal", "hcpctl"] });
    expect(await authenticate(`Bearer ${await token({ email: "alice@example.com" })}`)).toEqual({
      user: "alice@example.com",
    });
  });

  it("refuses a missing token, another audience, an expired token, a foreign signature and a missing claim", async () => {
    const authenticate = oidcAuthenticator({ issuer, audiences: ["hcpctl"] });
    const error = async (authorization: string | undefined): Promise<string> => {
      const r = await authenticate(authorization);
      return "error" in r ? r.error : `accepted ${r.user}`;
    };
    expect(await error(undefined)).toMatch(/bearer token/);
    expect(await error(`Bearer ${await token({ email: "a@x" }, { aud: "other" })}`)).toMatch(/aud/);
    expect(await error(`Bearer ${await token({ email: "a@x" }, { exp: "-1m" })}`)).toMatch(/exp/);
    expect(await error(`Bearer ${await token({ email: "a@x" }, { signer: stranger })}`)).toMatch(/signature/);
    expect(await error(`Bearer ${await token({ sub: "a" })}`)).toMatch(/no email claim/);
  });

  it("refuses to start without an audience", () => {
    expect(() => oidcAuthenticator({ issuer, audiences: [] })).toThrow(/--gate-oidc-audience/);
  });
});
