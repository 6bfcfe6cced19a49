/** Lease leader election between two real processes against the service cluster's apiserver. */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leaseType } from "../../operators/runtime/leaderelection.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { clusterInfo } from "../support/region.ts";

const script = fileURLToPath(new URL("../support/leader-process.ts", import.meta.url));
const leaseDurationMs = 15_000;
const retryPeriodMs = 2_000;

interface Candidate {
  identity: string;
  child: ChildProcess;
  lines: string[];
}

function candidate(namespace: string, lease: string, identity: string): Candidate {
  const child = spawn(
    process.execPath,
    [script, clusterInfo("service").kubeconfigPath, namespace, lease, identity],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on("line", (l) => lines.push(l));
  return { identity, child, lines };
}

const leads = (c: Candidate): boolean => c.lines.includes(`LEADING ${c.identity}`);

describe("leader election", () => {
  const client = clientFor("service");
  let ns: Awaited<ReturnType<typeof tempNamespace>>;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    ns = await tempNamespace(client, "lease");
  });
  afterAll(async () => {
    for (const c of children) c.kill("SIGKILL");
    await ns.remove();
  });

  async function pair(lease: string): Promise<[Candidate, Candidate]> {
    const a = candidate(ns.name, lease, "replica-a");
    children.push(a.child);
    await eventually("first replica leads", () => leads(a));
    const b = candidate(ns.name, lease, "replica-b");
    children.push(b.child);
    // The follower has run and tried at least once: its attempt found the lease held by the leader.
    await eventually("the follower to see the leader's lease", () => b.lines.includes("LEADER replica-a"));
    expect(leads(b)).toBe(false);
    return [a, b];
  }

  it("fails over within the lease duration when the leader dies", async () => {
    const [a, b] = await pair("crash-failover");
    const killedAt = Date.now();
    a.child.kill("SIGKILL");
    await eventually("follower takes over", () => leads(b), leaseDurationMs + 5 * retryPeriodMs);
    const takeoverMs = Date.now() - killedAt;
    // The follower waits out the lease from when it last saw it renewed (up to one jittered retry
    // period before or after the kill), then takes it at its next jittered retry.
    const retryMax = retryPeriodMs * 1.2;
    expect(takeoverMs).toBeGreaterThan(leaseDurationMs - retryPeriodMs - 500);
    expect(takeoverMs).toBeLessThan(leaseDurationMs + 2 * retryMax + 1_000);
    const lease = await client.get<{
      metadata: object;
      spec: { holderIdentity: string; leaseTransitions: number };
    }>(leaseType, "crash-failover", ns.name);
    expect(lease.spec.holderIdentity).toBe("replica-b");
    expect(lease.spec.leaseTransitions).toBe(1);
    b.child.kill("SIGKILL");
  });

  it("releases the lease on SIGTERM so the follower takes over at once", async () => {
    const [a, b] = await pair("graceful-handover");
    const stoppedAt = Date.now();
    a.child.kill("SIGTERM");
    await eventually("leader reports it stopped", () => a.lines.includes("STOPPED replica-a"));
    await eventually("follower takes over", () => leads(b), leaseDurationMs);
    expect(Date.now() - stoppedAt).toBeLessThan(2 * retryPeriodMs + 1_000);
    b.child.kill("SIGKILL");
  });
});
