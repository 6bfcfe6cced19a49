/**
 * A cluster's service-account signing keys as one value: the active private key the hosted
 * kube-apiserver signs with, a `next` private key once a rotation has begun, and the `retired`
 * public keys of keys that signed before, each kept until the last token it can have signed has
 * expired. Everything here is pure: the Secret that stores a keyring is read and written in
 * oidc.ts, and the rotation's steps in signing-key-rotation.ts.
 */
import { createHash, createPublicKey, type JsonWebKey } from "node:crypto";

/** What Entra ID accepts from a federated issuer, and what kube-apiserver signs with an RSA key. */
export const SIGNING_ALGORITHM = "RS256";

/** HyperShift reads the signing key from this key of the Secret spec.serviceAccountSigningKey names. */
export const SIGNING_KEY_SECRET_KEY = "key";
/** The stored Secret's key holding the next private key (PEM) while a rotation is under way. */
export const NEXT_SIGNING_KEY_SECRET_KEY = "next";
/** The stored Secret's key holding the retired public keys (JSON, RetiredKey[]). */
export const RETIRED_KEYS_SECRET_KEY = "retired";

/** A public key that no longer signs but still verifies the tokens it signed until `verifyUntil`. */
export interface RetiredKey {
  kid: string;
  /** SPKI PEM. */
  publicKey: string;
  /** RFC 3339 instant after which no token it signed can still be unexpired. */
  verifyUntil: string;
}

export interface SigningKeyring {
  /** PKCS#1 PEM: the key the HostedCluster signs with. */
  active: string;
  /** PKCS#1 PEM: made by beginRotation, published before it signs anything. */
  next?: string;
  retired: RetiredKey[];
}

/**
 * kube-apiserver's key ID for a public key: the SHA-256 of its DER (PKIX) encoding, base64url; the
 * tokens it signs carry this `kid`, so the JWKS must name the key the same way.
 */
export function keyId(keyPem: string): string {
  return publicHalf(keyPem).kid;
}

/** The public half of a PEM key (private or public) as an RFC 7517 JWK for signature checks. */
export function publicJwk(keyPem: string): JsonWebKey {
  return { ...publicHalf(keyPem).jwk };
}

/**
 * Parsing a private key to derive its public half was a sixth of the operators' CPU in a profile
 * of the lifecycle bench: every cluster reconcile names its key and publishes its JWKS. The halves
 * are remembered by a digest of the PEM (not the PEM: the cache holds no private key), a bounded
 * number of them, the oldest forgotten first.
 */
const PUBLIC_HALVES_KEPT = 20_000;
const publicHalves = new Map<string, { kid: string; jwk: JsonWebKey }>();

function publicHalf(keyPem: string): { kid: string; jwk: JsonWebKey } {
  const digest = createHash("sha256").update(keyPem).digest("base64url");
  const known = publicHalves.get(digest);
  if (known) return known;
  const pub = createPublicKey(keyPem);
  const der = pub.export({ format: "der", type: "spki" });
  const kid = createHash("sha256").update(der).digest("base64url");
  const { kty, n, e } = pub.export({ format: "jwk" });
  const half = { kid, jwk: { use: "sig", kty, kid, alg: SIGNING_ALGORITHM, n, e } };
  if (publicHalves.size >= PUBLIC_HALVES_KEPT) publicHalves.delete(publicHalves.keys().next().value ?? "");
  publicHalves.set(digest, half);
  return half;
}

export function publicKeyPem(keyPem: string): string {
  return createPublicKey(keyPem).export({ format: "pem", type: "spki" }).toString();
}

/** Retired keys whose tokens may still be unexpired at `now`. */
export function unexpiredRetired(ring: SigningKeyring, now: number): RetiredKey[] {
  return ring.retired.filter((r) => Date.parse(r.verifyUntil) > now);
}

/**
 * The JWKS's keys at `now`: the active key, the next key (so that it verifies before it signs) and
 * every retired key still within its verify-until instant; one entry per kid.
 */
export function publishedJwks(ring: SigningKeyring, now: number): JsonWebKey[] {
  const keys = [
    ring.active,
    ...(ring.next ? [ring.next] : []),
    ...unexpiredRetired(ring, now).map((r) => r.publicKey),
  ];
  const seen = new Set<string>();
  return keys.map(publicJwk).filter((k) => {
    const kid = String(k.kid);
    if (seen.has(kid)) return false;
    seen.add(kid);
    return true;
  });
}

/** Milliseconds until the published JWKS next loses a retired key; undefined when none is due. */
export function nextRetirementInMs(ring: SigningKeyring, now: number): number | undefined {
  const due = unexpiredRetired(ring, now).map((r) => Date.parse(r.verifyUntil) - now);
  return due.length ? Math.min(...due) : undefined;
}

/** The keyring a Secret's data (base64 values) holds; undefined when it has no active key. */
export function keyringFromSecretData(data: Record<string, string> | undefined): SigningKeyring | undefined {
  const decode = (k: string) => (data?.[k] ? Buffer.from(data[k], "base64").toString("utf8") : undefined);
  const active = decode(SIGNING_KEY_SECRET_KEY);
  if (!active) return undefined;
  const next = decode(NEXT_SIGNING_KEY_SECRET_KEY);
  const retired = JSON.parse(decode(RETIRED_KEYS_SECRET_KEY) ?? "[]") as RetiredKey[];
  return { active, ...(next ? { next } : {}), retired };
}

export function keyringToSecretData(ring: SigningKeyring): Record<string, string> {
  const encode = (s: string) => Buffer.from(s).toString("base64");
  return {
    [SIGNING_KEY_SECRET_KEY]: encode(ring.active),
    ...(ring.next ? { [NEXT_SIGNING_KEY_SECRET_KEY]: encode(ring.next) } : {}),
    ...(ring.retired.length ? { [RETIRED_KEYS_SECRET_KEY]: encode(JSON.stringify(ring.retired)) } : {}),
  };
}
