/**
 * The status hash the agent sends with each status event and the server echoes back in status
 * resync requests: SHA-256 over the status serialised with sorted keys, as Go's json.Marshal of a
 * map orders them (Go also escapes <, > and &; the hash only has to be stable for one agent, since
 * the server compares it with nothing but what that agent sent).
 */
import { createHash } from "node:crypto";

/** JSON with object keys sorted at every level; arrays keep their order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

export function statusHash(status: unknown): string {
  return createHash("sha256")
    .update(status === undefined ? "" : canonicalJson(status))
    .digest("hex");
}
