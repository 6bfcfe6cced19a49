/**
 * A signing-key rotation against a real apiserver (the keyring's Secret, its resourceVersion) and
 * the in-memory blob store the cluster tests publish to: a token signed with the old key verifies
 * against the published JWKS before, during and after the switch while unexpired, and is refused
 * once its key is retired; a token signed with the new key verifies after the switch. Each step
 * run again, as after a crash, writes nothing.
 */
import { createPublicKey, createSign, createVerify, type JsonWebKey } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { SecretResource } from "../../operators/api/core.ts";
import {
  BlobIssuerDocuments,
  issuerDocuments,
  issuerPath,
  issuerURL,
  SecretSigningKeys,
} from "../../operators/cluster/oidc.ts";
import {
  MAX_TOKEN_LIFETIME_MS,
  SigningKeyNotPublishedError,
  SigningKeyRotation,
  SWITCH_ROLLOUT_ALLOWANCE_MS,
} from "../../operators/cluster/signing-key-rotation.ts";
import { keyId } from "../../operators/cluster/signing-keyring.ts";
import { MemoryBlobStore } from "../support/fakes.ts";
import { clientFor, tempNamespace } from "../support/fixtures.ts";

const client = clientFor("service");
let ns: { name: string; remove(): Promise<void> };

beforeAll(async () => {
  ns = await tempNamespace(client, "rotation");
});
afterAll(async () => {
  await ns.remove();
});

const BASE = "https://issuer.test/";
const HOUR = 3_600_000;

const cluster = {
  apiVersion: "hcp.aro.dev/v1alpha1",
  kind: "HcpCluster",
  metadata: { uid: "rotating-uid", namespace: "default", name: "rotating" },
  spec: { platform: { azure: { tenantId: "tenant" } } },
} as unknown as HcpCluster;
const owner = { uid: "rotating-uid", name: "default/rotating" };

const b64url = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");

/** An RS256 JWT as the hosted kube-apiserver signs it: the key's kid, an exp. */
function signToken(privateKeyPem: string, iat: number, lifetimeMs: number): string {
  const header = b64url({ alg: "RS256", typ: "JWT", kid: keyId(privateKeyPem) });
  const payload = b64url({
    iss: issuerURL(BASE, cluster),
    sub: "system:serviceaccount:default:app",
    aud: ["api://AzureADTokenExchange"],
    iat: Math.floor(iat / 1000),
    exp: Math.floor((iat + lifetimeMs) / 1000),
  });
  const signature = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(privateKeyPem, "base64url");
  return `${header}.${payload}.${signature}`;
}

/** What a verifier (Entra ID) does with the published JWKS: find the kid, check the signature and exp. */
function verify(
  token: string,
  jwksBody: string | undefined,
  now: number,
): "valid" | "unknown key" | "expired" {
  const [header = "", payload = "", signature = ""] = token.split(".");
  const { kid } = JSON.parse(Buffer.from(header, "base64url").toString()) as { kid: string };
  const keys = (JSON.parse(jwksBody ?? "{}") as { keys?: JsonWebKey[] }).keys ?? [];
  const jwk = keys.find((k) => k.kid === kid);
  if (!jwk) return "unknown key";
  const key = createPublicKey({ key: jwk, format: "jwk" });
  if (!createVerify("RSA-SHA256").update(`${header}.${payload}`).verify(key, signature, "base64url"))
    throw new Error("bad signature");
  const { exp } = JSON.parse(Buffer.from(payload, "base64url").toString()) as { exp: number };
  return exp * 1000 > now ? "valid" : "expired";
}

describe("rotating a cluster's service-account signing key", () => {
  it("breaks no token: the old key verifies until its tokens expire, the new one from the switch", async () => {
    let now = Date.parse("2027-01-04T10:00:00Z");
    const blobs = new MemoryBlobStore();
    const documents = new BlobIssuerDocuments(blobs);
    const keys = new SecretSigningKeys(client, ns.name);
    const rotation = new SigningKeyRotation({ keys, documents, now: () => now });
    const path = issuerPath(cluster);
    /** The cluster reconcile's OIDC phase: publish what the keyring holds now. */
    const reconcile = async () => {
      const ring = await keys.ensure(owner);
      await documents.publish(path, issuerDocuments(issuerURL(BASE, cluster), ring, now));
      return ring;
    };
    const jwks = () => documents.readJwks(path);
    const version = async () =>
      (await client.get(SecretResource, `sa-signing-key-${owner.uid}`, ns.name)).metadata.resourceVersion;

    const oldKey = (await reconcile()).active;
    // The longest lived token the old key can sign: issued at the switch, a year's lifetime.
    const oldToken = signToken(oldKey, now, MAX_TOKEN_LIFETIME_MS);
    expect(verify(oldToken, await jwks(), now)).toBe("valid");

    await rotation.beginRotation(cluster);
    const begun = await version();
    await rotation.beginRotation(cluster); // a crash before the step was recorded: run again
    expect(await version()).toBe(begun);
    await expect(rotation.switchSigningKey(cluster)).rejects.toThrow(SigningKeyNotPublishedError);
    const { next } = await reconcile();
    expect(next).toBeDefined();
    expect(verify(oldToken, await jwks(), now)).toBe("valid");
    expect((await rotation.rotationState(cluster)).nextPublished).toBe(true);

    now += HOUR;
    await rotation.switchSigningKey(cluster);
    const switched = await version();
    now += HOUR;
    await rotation.switchSigningKey(cluster);
    expect(await version()).toBe(switched);
    const ring = await reconcile();
    expect(ring.active).toBe(next);
    const newToken = signToken(ring.active, now, HOUR);
    expect(verify(newToken, await jwks(), now)).toBe("valid");
    expect(verify(oldToken, await jwks(), now)).toBe("valid");

    // A restart reads the rotated keyring back from the Secret.
    const restarted = new SecretSigningKeys(clientFor("service"), ns.name);
    await restarted.prime();
    expect(await restarted.ensure(owner)).toEqual(ring);

    // Just before the old key's verify-until: still valid, kept.
    const verifyUntil = (await rotation.rotationState(cluster)).retired[0]!.verifyUntil.getTime();
    expect(verifyUntil).toBe(
      Date.parse("2027-01-04T11:00:00Z") + MAX_TOKEN_LIFETIME_MS + SWITCH_ROLLOUT_ALLOWANCE_MS,
    );
    now = Date.parse("2027-01-04T10:00:00Z") + MAX_TOKEN_LIFETIME_MS - 1000;
    await rotation.retireExpired(cluster, new Date(now));
    await reconcile();
    expect(verify(oldToken, await jwks(), now)).toBe("valid");

    // Retired: the old key is gone from the JWKS, its tokens are refused; the new key's verify.
    now = verifyUntil;
    await rotation.retireExpired(cluster, new Date(now));
    const retired = await version();
    await rotation.retireExpired(cluster, new Date(now));
    expect(await version()).toBe(retired);
    await reconcile();
    expect(verify(oldToken, await jwks(), now)).toBe("unknown key");
    expect(verify(signToken(ring.active, now, HOUR), await jwks(), now)).toBe("valid");
    expect(await rotation.rotationState(cluster)).toMatchObject({ stage: "none", retired: [] });
  });
});
