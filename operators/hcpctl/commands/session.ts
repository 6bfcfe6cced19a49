/**
 * `hcpctl session request|list|approve|deny|revoke|kubeconfig`: AccessSessions (issue 36), an SRE's
 * time-limited access to one hosted cluster's API through the session gate. The owner is who the
 * service cluster says you are (a SelfSubjectReview), never a flag: admission refuses a session
 * whose owner is not the user who creates it, and an approval by the owner. hcpctl never sees the
 * session's credential; `kubeconfig` points kubectl at the gate, which forwards with it.
 */
import { randomBytes } from "node:crypto";
import { dump } from "js-yaml";
import {
  ACCESS_LEVELS,
  ACCESS_SESSION_TTL_SECONDS,
  AccessSessionResource,
  API_VERSION,
  ACCESS_SESSION_KIND,
  HcpClusterResource,
  sessionUsable,
  type AccessLevel,
  type AccessSession,
  type AccessSessionDecision,
  type HcpCluster,
} from "../../api/v1alpha1/index.ts";
import type { KubeObject, ResourceType } from "../../runtime/kube.ts";
import { KubeApiError } from "../../runtime/kube.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { formatTable } from "../table.ts";
import { ageOf, parseDuration } from "../time.ts";

const SelfSubjectReviewResource = {
  group: "authentication.k8s.io",
  version: "v1",
  kind: "SelfSubjectReview",
  plural: "selfsubjectreviews",
  namespaced: false,
} as const satisfies ResourceType;

interface SelfSubjectReview extends KubeObject {
  status?: { userInfo?: { username?: string; groups?: string[] } };
}

export interface SessionRequestFlags {
  namespace?: string;
  level: string;
  reason: string;
  ttl: string;
}

export interface SessionDecisionFlags {
  reason?: string;
}

export interface SessionListFlags {
  all?: boolean;
}

export interface SessionKubeconfigFlags {
  gate: string;
  gateCa?: string;
  issuer: string;
  clientId: string;
  issuerCa?: string;
}

/** Who the service cluster says the caller is. */
export async function whoAmI(conn: Connection): Promise<string> {
  const review = await conn.client
    .create<SelfSubjectReview>(SelfSubjectReviewResource, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "SelfSubjectReview",
      metadata: {},
    })
    .catch((err: unknown) => {
      throw conn.explain(err, SelfSubjectReviewResource);
    });
  const name = review.status?.userInfo?.username;
  if (!name) throw new CliError(`the API server at ${conn.target.server} did not say who you are`);
  return name;
}

function levelOf(text: string): AccessLevel {
  const level = ACCESS_LEVELS.find((l) => l.toLowerCase() === text.toLowerCase());
  if (!level) throw new CliError(`--level must be one of ${ACCESS_LEVELS.join(", ")}, got "${text}"`);
  return level;
}

/** The TTL as whole seconds within the CRD's bounds, or a CliError naming --ttl. */
export function sessionTtlSeconds(text: string): number {
  const seconds = Math.floor(parseDuration(text, "--ttl") / 1000);
  const { min, max } = ACCESS_SESSION_TTL_SECONDS;
  if (seconds < min || seconds > max)
    throw new CliError(`--ttl must be between ${min / 60}m and ${max / 3600}h, got ${text}`);
  return seconds;
}

/** What the API server's refusal says (admission names the rule), as the CLI's error. */
function refused(conn: Connection, err: unknown): CliError {
  if (err instanceof KubeApiError && (err.code === 422 || err.code === 403 || err.code === 409))
    return new CliError(err.message);
  return conn.explain(err, AccessSessionResource);
}

export async function runSessionRequest(
  io: Io,
  connect: Connect,
  args: { cluster: string; flags: SessionRequestFlags },
): Promise<void> {
  const { cluster: name, flags } = args;
  if (!flags.reason.trim()) throw new CliError("--reason must say why");
  const level = levelOf(flags.level);
  const ttlSeconds = sessionTtlSeconds(flags.ttl);
  const conn = connect();
  const namespace = flags.namespace ?? conn.namespace;
  const cluster = await conn.get<HcpCluster>(HcpClusterResource, name, namespace);
  if (!cluster) throw new CliError(`HcpCluster "${name}" not found in namespace "${namespace}"`);
  const owner = await whoAmI(conn);
  const session: AccessSession = {
    apiVersion: API_VERSION,
    kind: ACCESS_SESSION_KIND,
    metadata: { name: `${name}-${randomBytes(3).toString("hex")}` },
    spec: { owner, clusterRef: { namespace, name }, level, reason: flags.reason, ttlSeconds },
  };
  const created = await conn.client.create(AccessSessionResource, session).catch((err: unknown) => {
    throw refused(conn, err);
  });
  const approval =
    level === "Admin" ? "it needs an approver who is not you" : "read-only: policy may approve it";
  io.stdout.write(
    `accesssession/${created.metadata.name ?? ""} requested for ${owner} (${level}, ${flags.ttl}); ${approval}\n`,
  );
}

async function sessionNamed(conn: Connection, name: string): Promise<AccessSession> {
  const s = await conn.get<AccessSession>(AccessSessionResource, name);
  if (!s) throw new CliError(`AccessSession "${name}" not found`);
  return s;
}

async function decide(
  io: Io,
  connect: Connect,
  args: { name: string; decision: AccessSessionDecision["decision"]; flags: SessionDecisionFlags },
): Promise<void> {
  const conn = connect();
  const session = await sessionNamed(conn, args.name);
  const by = await whoAmI(conn);
  if (session.spec.approval)
    throw new CliError(
      `AccessSession "${args.name}" was already ${session.spec.approval.decision.toLowerCase()} by ${session.spec.approval.by}`,
    );
  if (by === session.spec.owner)
    throw new CliError(`AccessSession "${args.name}" is yours: another person must decide on it`);
  const approval: AccessSessionDecision = {
    decision: args.decision,
    by,
    ...(args.flags.reason ? { reason: args.flags.reason } : {}),
  };
  await conn.client
    .mergePatch(AccessSessionResource, { name: args.name }, { spec: { approval } })
    .catch((err: unknown) => {
      throw refused(conn, err);
    });
  io.stdout.write(`accesssession/${args.name} ${args.decision.toLowerCase()} by ${by}\n`);
}

export const runSessionApprove = (
  io: Io,
  connect: Connect,
  args: { name: string; flags: SessionDecisionFlags },
): Promise<void> => decide(io, connect, { ...args, decision: "Approved" });

export const runSessionDeny = (
  io: Io,
  connect: Connect,
  args: { name: string; flags: SessionDecisionFlags },
): Promise<void> => decide(io, connect, { ...args, decision: "Denied" });

export async function runSessionRevoke(
  io: Io,
  connect: Connect,
  args: { name: string; flags: SessionDecisionFlags },
): Promise<void> {
  const conn = connect();
  const session = await sessionNamed(conn, args.name);
  if (session.spec.revocation) {
    io.stdout.write(`accesssession/${args.name} was already revoked by ${session.spec.revocation.by}\n`);
    return;
  }
  const by = await whoAmI(conn);
  const revocation = { by, ...(args.flags.reason ? { reason: args.flags.reason } : {}) };
  await conn.client
    .mergePatch(AccessSessionResource, { name: args.name }, { spec: { revocation } })
    .catch((err: unknown) => {
      throw refused(conn, err);
    });
  io.stdout.write(`accesssession/${args.name} revoked by ${by}: the gate refuses it from now on\n`);
}

export async function runSessionList(
  io: Io,
  connect: Connect,
  args: { flags: SessionListFlags },
): Promise<void> {
  const conn = connect();
  const sessions = await conn.list<AccessSession>(AccessSessionResource, {});
  const me = args.flags.all ? undefined : await whoAmI(conn);
  const now = io.now();
  const rows = [
    ["NAME", "OWNER", "CLUSTER", "LEVEL", "PHASE", "USABLE", "EXPIRES", "APPROVED BY", "AGE"],
    ...sessions.items
      .filter((s) => !me || s.spec.owner === me || !s.spec.approval)
      .map((s) => {
        const usable = sessionUsable(s, now);
        return [
          s.metadata.name ?? "",
          s.spec.owner,
          `${s.spec.clusterRef.namespace}/${s.spec.clusterRef.name}`,
          s.spec.level,
          s.status?.phase ?? "Pending",
          usable.usable ? "yes" : `no (${usable.why})`,
          s.status?.expiresAt ?? "",
          s.spec.approval ? `${s.spec.approval.by} (${s.spec.approval.decision})` : "",
          ageOf(s.metadata.creationTimestamp, now),
        ];
      }),
  ];
  io.stdout.write(formatTable(rows));
}

/**
 * A kubeconfig whose server is the gate's path for the session and whose user is this program's
 * `session token` (an exec credential plugin that signs in with the issuer), so kubectl sends the
 * owner's ID token and the gate forwards with the session's credential.
 */
export async function runSessionKubeconfig(
  io: Io,
  connect: Connect,
  args: { name: string; flags: SessionKubeconfigFlags; program: string[] },
): Promise<void> {
  const { flags } = args;
  let gate: URL;
  try {
    gate = new URL(flags.gate);
  } catch {
    throw new CliError(`--gate must be the gate's https URL, got "${flags.gate}"`);
  }
  if (gate.protocol !== "https:") throw new CliError(`--gate must be https, got "${flags.gate}"`);
  const conn = connect();
  const session = await sessionNamed(conn, args.name);
  const server = new URL(
    `sessions/${encodeURIComponent(args.name)}/kas`,
    gate.href.endsWith("/") ? gate : `${gate.href}/`,
  );
  const [command = "hcpctl", ...prefix] = args.program;
  const tokenArgs = [...prefix, "session", "token", "--issuer", flags.issuer, "--client-id", flags.clientId];
  const context = `session-${args.name}`;
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: context,
        cluster: { server: server.href, ...(flags.gateCa ? { "certificate-authority": flags.gateCa } : {}) },
      },
    ],
    users: [
      {
        name: session.spec.owner,
        user: {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command,
            args: tokenArgs,
            // A private issuer's CA, for the plugin's fetch (Node reads it at start).
            ...(flags.issuerCa ? { env: [{ name: "NODE_EXTRA_CA_CERTS", value: flags.issuerCa }] } : {}),
            interactiveMode: "IfAvailable",
            provideClusterInfo: false,
          },
        },
      },
    ],
    contexts: [{ name: context, context: { cluster: context, user: session.spec.owner } }],
    "current-context": context,
  };
  io.stdout.write(dump(config, { lineWidth: -1 }));
}
