/**
 * The portal's sign-in session, sealed in a cookie (decision 0014): AES-256-GCM with the server
 * key, so every replica can read it and a tampered or foreign cookie does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export const SESSION_COOKIE = "__Host-hcp-portal";

export interface PortalSession {
  /** Random per sign-in: the CSRF token is derived from it. */
  id: string;
  /** The email claim: the name AccessSessions and audit lines carry. */
  name: string;
  groups: string[];
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function sessionKey(secret: Buffer): Buffer {
  if (secret.length !== 32) {
    throw new Error(`portal session key: want 32 bytes, got ${secret.length}`);
  }
  return secret;
}

export function sealSession(key: Buffer, session: PortalSession): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(session), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** The session in `sealed`, or undefined when it is absent, altered, foreign or expired. */
export function openSession(key: Buffer, sealed: string | undefined, now: number): PortalSession | undefined {
  if (!sealed) return undefined;
  const raw = Buffer.from(sealed, "base64url");
  if (raw.length <= IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const text = Buffer.concat([
      decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
    const session = parseSession(JSON.parse(text));
    return session && session.expiresAt > now ? session : undefined;
  } catch {
    return undefined;
  }
}

function parseSession(value: unknown): PortalSession | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.id !== "string" || typeof v.name !== "string") return undefined;
  if (typeof v.expiresAt !== "number" || !Array.isArray(v.groups)) return undefined;
  if (!v.groups.every((g) => typeof g === "string")) return undefined;
  return { id: v.id, name: v.name, groups: v.groups, expiresAt: v.expiresAt };
}
