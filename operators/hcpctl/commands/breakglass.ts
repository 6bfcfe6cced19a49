/**
 * `hcpctl breakglass request|list|revoke`: the break-glass credentials of an HcpCluster, on the
 * same resources ARM's requestAdminCredential and revokeCredentials create. `request` and `revoke`
 * are hcpctl's only writes: a BreakglassCredential or BreakglassRevocation naming who asks and
 * why; the breakglass controller does the rest, and `list` shows where each stands. The
 * kubeconfig of a credential is in the Secret its status names; hcpctl never prints a key.
 */
import { randomBytes } from "node:crypto";
import {
  BREAKGLASS_TTL_SECONDS,
  breakglassCredential,
  breakglassRevocation,
  BreakglassCredentialResource,
  BreakglassRevocationResource,
  HcpClusterResource,
  type BreakglassCredential,
  type BreakglassRevocation,
  type HcpCluster,
} from "../../api/v1alpha1/index.ts";
import { KubeApiError } from "../../runtime/kube.ts";
import { CliError } from "../errors.ts";
import type { Connect, Io } from "../io.ts";
import type { Connection } from "../kube.ts";
import { formatTable } from "../table.ts";
import { ageOf, parseDuration } from "../time.ts";

export interface BreakglassRequestOptions {
  namespace?: string;
  requester: string;
  reason: string;
  ttl: string;
}

export interface BreakglassListOptions {
  namespace?: string;
}

/** The TTL as whole seconds within the CRD's bounds, or a CliError naming --ttl. */
export function ttlSeconds(text: string): number {
  const seconds = Math.floor(parseDuration(text, "--ttl") / 1000);
  const { min, max } = BREAKGLASS_TTL_SECONDS;
  if (seconds < min || seconds > max)
    throw new CliError(`--ttl must be between ${min / 60}m and ${max / 3600}h, got ${text}`);
  return seconds;
}

function checkWho(opts: { requester: string; reason: string }): void {
  if (!opts.requester.trim()) throw new CliError("--requester must name who asks");
  if (!opts.reason.trim()) throw new CliError("--reason must say why");
}

async function clusterOf(conn: Connection, name: string, namespace: string): Promise<HcpCluster> {
  const cluster = await conn.get<HcpCluster>(HcpClusterResource, name, namespace);
  if (!cluster) throw new CliError(`HcpCluster "${name}" not found in namespace "${namespace}"`);
  return cluster;
}

async function create(conn: Connection, obj: BreakglassCredential | BreakglassRevocation): Promise<void> {
  const type =
    obj.kind === "BreakglassRevocation" ? BreakglassRevocationResource : BreakglassCredentialResource;
  try {
    await conn.client.create(type, obj);
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 422) throw new CliError(err.message);
    throw conn.explain(err, type);
  }
}

const suffix = (): string => randomBytes(3).toString("hex");

export async function runBreakglassRequest(
  io: Io,
  connect: Connect,
  args: { cluster: string; opts: BreakglassRequestOptions },
): Promise<void> {
  const { cluster: name, opts } = args;
  checkWho(opts);
  const expirationSeconds = ttlSeconds(opts.ttl);
  const conn = connect();
  const namespace = opts.namespace ?? conn.namespace;
  const cluster = await clusterOf(conn, name, namespace);
  const credential = breakglassCredential({
    cluster,
    name: `${name}-${suffix()}`,
    requester: opts.requester,
    reason: opts.reason,
    expirationSeconds,
  });
  await create(conn, credential);
  io.stdout.write(
    `breakglasscredential/${credential.metadata.name ?? ""} requested; its kubeconfig goes to Secret ${credential.metadata.name ?? ""}-kubeconfig once Ready\n`,
  );
}

export async function runBreakglassRevoke(
  io: Io,
  connect: Connect,
  args: { cluster: string; opts: Omit<BreakglassRequestOptions, "ttl"> },
): Promise<void> {
  const { cluster: name, opts } = args;
  checkWho(opts);
  const conn = connect();
  const namespace = opts.namespace ?? conn.namespace;
  const cluster = await clusterOf(conn, name, namespace);
  const revocation = breakglassRevocation({
    cluster,
    name: `${name}-revoke-${suffix()}`,
    requester: opts.requester,
    reason: opts.reason,
  });
  await create(conn, revocation);
  io.stdout.write(`breakglassrevocation/${revocation.metadata.name ?? ""} requested\n`);
}

const readyOf = (o: {
  status?: { conditions?: Array<{ type: string; status: string; reason: string }> };
}) => {
  const ready = o.status?.conditions?.find((c) => c.type === "Ready");
  return ready ? `${ready.status} (${ready.reason})` : "Unknown";
};

export async function runBreakglassList(
  io: Io,
  connect: Connect,
  args: { cluster?: string; opts: BreakglassListOptions },
): Promise<void> {
  const conn = connect();
  const namespace = args.opts.namespace ?? conn.namespace;
  const [credentials, revocations] = await Promise.all([
    conn.list<BreakglassCredential>(BreakglassCredentialResource, { namespace }),
    conn.list<BreakglassRevocation>(BreakglassRevocationResource, { namespace }),
  ]);
  const mine = <T extends { spec: { clusterRef: { name: string } } }>(items: T[]) =>
    items.filter((o) => !args.cluster || o.spec.clusterRef.name === args.cluster);
  const now = io.now();
  const rows = [
    ["KIND", "NAME", "CLUSTER", "REQUESTER", "READY", "EXPIRES", "REVOKED", "AGE"],
    ...mine(credentials.items).map((c) => [
      "credential",
      c.metadata.name ?? "",
      c.spec.clusterRef.name,
      c.spec.requester,
      readyOf(c),
      c.status?.expirationTimestamp ?? "",
      c.status?.revoked ? "true" : "false",
      ageOf(c.metadata.creationTimestamp, now),
    ]),
    ...mine(revocations.items).map((r) => [
      "revocation",
      r.metadata.name ?? "",
      r.spec.clusterRef.name,
      r.spec.requester,
      readyOf(r),
      "",
      r.status?.revocationTimestamp ? `before ${r.status.revocationTimestamp}` : "",
      ageOf(r.metadata.creationTimestamp, now),
    ]),
  ];
  io.stdout.write(formatTable(rows));
}
