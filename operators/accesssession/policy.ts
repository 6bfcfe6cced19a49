/**
 * The region's session policy from the operators' flags, each refused with a message naming it:
 *   --session-readonly-max-seconds <n>   longest read-only session (default 43200, the CRD's bound)
 *   --session-admin-max-seconds <n>      longest admin session (default 14400)
 *   --session-readonly-approval <who>    `policy` approves read-only sessions (default), `person` asks an approver
 *   --session-retention-seconds <n>      how long an ended session stays as a record (default 604800)
 */
import { ACCESS_SESSION_TTL_SECONDS } from "../api/v1alpha1/accesssession.ts";
import { DEFAULT_SESSION_POLICY, type SessionPolicy } from "./scope.ts";

export interface SessionPolicyFlags {
  "session-readonly-max-seconds"?: string;
  "session-admin-max-seconds"?: string;
  "session-readonly-approval"?: string;
  "session-retention-seconds"?: string;
}

export const SESSION_POLICY_OPTIONS = {
  "session-readonly-max-seconds": { type: "string" },
  "session-admin-max-seconds": { type: "string" },
  "session-readonly-approval": { type: "string" },
  "session-retention-seconds": { type: "string" },
} as const;

function ttlFlag(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  const { min, max } = ACCESS_SESSION_TTL_SECONDS;
  if (value.trim() === "" || !Number.isInteger(n) || n < min || n > max)
    throw new Error(`--${flag} must be a whole number of seconds from ${min} to ${max}; got "${value}"`);
  return n;
}

export function sessionPolicyFromFlags(flags: SessionPolicyFlags): SessionPolicy {
  const approval = flags["session-readonly-approval"] ?? "policy";
  if (approval !== "policy" && approval !== "person")
    throw new Error(`--session-readonly-approval must be "policy" or "person"; got "${approval}"`);
  const retention = flags["session-retention-seconds"];
  const retentionSeconds =
    retention === undefined ? DEFAULT_SESSION_POLICY.retentionMs / 1000 : Number(retention);
  if (retention?.trim() === "" || !Number.isFinite(retentionSeconds) || retentionSeconds < 0)
    throw new Error(
      `--session-retention-seconds must be a number of seconds, 0 or more; got "${retention ?? ""}"`,
    );
  const defaults = DEFAULT_SESSION_POLICY.maxTtlSeconds;
  return {
    maxTtlSeconds: {
      ReadOnly: ttlFlag(
        "session-readonly-max-seconds",
        flags["session-readonly-max-seconds"],
        defaults.ReadOnly,
      ),
      Admin: ttlFlag("session-admin-max-seconds", flags["session-admin-max-seconds"], defaults.Admin),
    },
    approveReadOnly: approval === "policy",
    retentionMs: retentionSeconds * 1000,
  };
}
