/**
 * The cluster reconciler at the phase level, on fakes (test/support/cluster-world.ts). Each test is
 * one reconcile (or two) and asserts what was written, called and recorded. The OIDC issuer,
 * deletion and customer-managed etcd keys have files of their own beside this one.
 */
import { describe, expect, it } from "vitest";
import type { HcpClusterStatus } from "../api/v1alpha1/index.ts";
import type { StepState } from "../hcp/steps.ts";
import { RETRY_ANNOTATION } from "../api/v1alpha1/labels.ts";
import { RetryableStepError } from "./azure-step.ts";
import { AZURE_POLL_MS, INFRA_RECHECK_MS } from "./scope.ts";
import {
  AZURE_STEPS,
  cluster,
  condition,
  managementCluster,
  RECHECK_MS,
  world,
} from "../../test/support/cluster-world.ts";

describe("ClusterReconciler", () => {
  it("adds its finalizer first and does nothing else in that reconcile", async () => {
    const c = cluster();
    c.metadata.finalizers = [];
    const w = world({ clusters: [c] });
    expect(await w.reconcile()).toEqual({});
    expect(w.writer.writes.map((x) => x.verb)).toEqual(["addFinalizer"]);
    expect(w.infra.total()).toBe(0);
  });

  it("runs every phase in order on a new cluster: placement, Azure, then the HostedCluster work", async () => {
    const w = world();
    // Steps found ready are read again at their recheck, even if nothing else wakes the cluster.
    expect(await w.reconcile()).toEqual({ requeueAfterMs: INFRA_RECHECK_MS, periodic: true });
    expect(Object.keys(w.infra.calls)).toEqual(AZURE_STEPS.map(([step]) => step));
    const [work] = w.writer.of("apply", "ManifestWork");
    expect(work).toMatchObject({ name: "uid-demo", namespace: "mgmt-1" });
    const status = w.writer.lastStatus<HcpClusterStatus>();
    expect(status).toMatchObject({
      managementCluster: "mgmt-1",
      observedGeneration: 1,
      phase: "Provisioning",
    });
    expect(condition(status, "HostedClusterApplied")).toMatchObject({
      status: "False",
      reason: "WaitingForAgent",
    });
    expect(condition(status, "Ready")).toMatchObject({ status: "False", reason: "WaitingForAgent" });
    // An install is told by its failures and its end: the steps that became True, the work's
    // creation among them, are in the conditions, not events; no Progressing echo.
    expect(w.events.reasons()).toEqual([]);
  });

  it.each(AZURE_STEPS)(
    "holds the steps after %s while it is pending, and looks again at its poll interval",
    async (step, type) => {
      const w = world();
      w.infra.script[step] = { state: "pending", reason: "InProgress", message: "creating" };
      expect(await w.reconcile()).toEqual({ requeueAfterMs: AZURE_POLL_MS });
      const later = AZURE_STEPS.slice(AZURE_STEPS.findIndex(([s]) => s === step) + 1).map(([s]) => s);
      for (const s of later) expect(w.infra.calls[s], s).toBeUndefined();
      expect(w.writer.of("apply")).toEqual([]);
      const status = w.writer.lastStatus<HcpClusterStatus>();
      expect(condition(status, type)).toMatchObject({ status: "False", reason: "InProgress" });
      expect(status?.observedGeneration).toBe(1);
    },
  );

  it.each(AZURE_STEPS)(
    "backs off on a retryable failure of %s without moving observedGeneration",
    async (step, type) => {
      const c = cluster({ generation: 2, status: { observedGeneration: 1 } });
      const w = world({ clusters: [c] });
      w.infra.script[step] = {
        state: "failed",
        reason: "InternalServerError",
        message: "boom",
        userActionRequired: false,
      };
      await expect(w.reconcile()).rejects.toBeInstanceOf(RetryableStepError);
      const status = w.writer.lastStatus<HcpClusterStatus>();
      expect(condition(status, type)).toMatchObject({ status: "False", reason: "InternalServerError" });
      expect(condition(status, "Degraded")?.status).toBe("False");
      expect(status?.observedGeneration).toBe(1);
    },
  );

  it("holds a user error without calling Azure again until the recheck interval, or a new generation", async () => {
    const w = world();
    const quota: StepState = {
      state: "failed",
      reason: "QuotaExceeded",
      message: "no IPs left",
      userActionRequired: true,
    };
    w.infra.script.ensureIngress = quota;
    expect(await w.reconcile()).toEqual({ requeueAfterMs: RECHECK_MS });
    expect(condition(w.writer.lastStatus(), "Degraded")).toMatchObject({
      status: "True",
      reason: "QuotaExceeded",
    });
    expect(w.events.events.find((e) => e.reason === "QuotaExceeded")?.type).toBe("Warning");

    w.observeStatus();
    await w.reconcile();
    expect(w.infra.calls.ensureIngress).toBe(1);

    w.tick(RECHECK_MS);
    await w.reconcile();
    expect(w.infra.calls.ensureIngress).toBe(2);

    w.clusters.set({
      ...w.clusters.get("default", "demo")!,
      metadata: { ...cluster().metadata, generation: 2 },
    });
    await w.reconcile();
    expect(w.infra.calls.ensureIngress).toBe(3);
  });

  it("lets a held user error go at once when an SRE asks for a retry (a new retry annotation)", async () => {
    const w = world();
    w.infra.script.ensureIngress = {
      state: "failed",
      reason: "QuotaExceeded",
      message: "no IPs left",
      userActionRequired: true,
    };
    await w.reconcile();
    w.observeStatus();
    await w.reconcile();
    expect(w.infra.calls.ensureIngress).toBe(1);

    const ask = (value: string): void => {
      const current = w.clusters.get("default", "demo")!;
      w.clusters.set({
        ...current,
        metadata: {
          ...current.metadata,
          annotations: { ...current.metadata.annotations, [RETRY_ANNOTATION]: value },
        },
      });
    };
    delete w.infra.script.ensureIngress;
    ask("2026-11-28T23:50:00Z by bob@example.com");
    await w.reconcile();
    expect(w.infra.calls.ensureIngress).toBe(2);
    expect(condition(w.writer.lastStatus(), "Degraded")).toMatchObject({ status: "False" });
  });

  it("trusts Azure steps found ready until the recheck, or a new generation, and says the same with what they found", async () => {
    const w = world();
    await w.reconcile();
    const firstRecords = w.writer.lastStatus<HcpClusterStatus>();
    const calls = () => AZURE_STEPS.map(([step]) => w.infra.calls[step] ?? 0);
    expect(calls()).toEqual([1, 1, 1, 1]);
    // A status change of the cluster's work wakes it: no Azure read, the same conditions.
    w.observeStatus();
    w.tick(INFRA_RECHECK_MS - 1);
    await w.reconcile();
    expect(calls()).toEqual([1, 1, 1, 1]);
    for (const [, type] of AZURE_STEPS)
      expect(condition(w.writer.lastStatus(), type)).toEqual(condition(firstRecords, type));
    w.tick(1);
    await w.reconcile();
    expect(calls()).toEqual([2, 2, 2, 2]);
    w.clusters.set({
      ...w.clusters.get("default", "demo")!,
      metadata: { ...cluster().metadata, generation: 2 },
    });
    await w.reconcile();
    expect(calls()).toEqual([3, 3, 3, 3]);
  });

  it("begins one subscription's rechecks at its budget's pace, each when its slot comes, and reads a new generation at once", async () => {
    const names = ["a", "b", "c"];
    const w = world({ clusters: names.map((name) => cluster({ name })), budget: { perSecond: 1, burst: 2 } });
    for (const name of names) await w.reconcile(name);
    const calls = () => AZURE_STEPS.map(([step]) => w.infra.calls[step] ?? 0);
    expect(calls()).toEqual([3, 3, 3, 3]);

    // Every step of the three is due at once. The clusters' subscription has two slots now and
    // one a second after; the parent zone's ("s") the same, apart.
    w.tick(INFRA_RECHECK_MS);
    const a = await w.reconcile("a");
    // a: its group and zone now, its ingress in a second; its delegation now, in the other subscription.
    expect(calls()).toEqual([4, 4, 4, 3]);
    expect(a.requeueAfterMs).toBe(1_000);
    await w.reconcile("b");
    expect(calls()).toEqual([4, 4, 5, 3]);
    // Put off, still trusted: nothing went back from ready.
    for (const [, type] of AZURE_STEPS)
      expect(condition(w.writer.lastStatus(), type)).toMatchObject({ status: "True" });

    // a's slot comes: its ingress is read, not put off again.
    w.tick(1_000);
    await w.reconcile("a");
    expect(calls()).toEqual([4, 4, 5, 4]);

    // A new generation is no recheck: all of c is read at once, whatever the budget.
    w.clusters.set({
      ...w.clusters.get("default", "c")!,
      metadata: { ...cluster({ name: "c" }).metadata, generation: 2 },
    });
    await w.reconcile("c");
    expect(calls()).toEqual([5, 5, 6, 5]);
  });

  it("after a restart trusts the steps its status shows ready for this generation, with rechecks spread over the interval", async () => {
    const before = world();
    await before.reconcile();
    const recorded = before.writer.lastStatus<HcpClusterStatus>()!;
    expect(recorded.azure).toEqual({
      dnsZone: { name: "demo.hcp.example.com", nameServers: ["ns1.example.net"] },
      apiIP: "20.0.0.1",
      ingressIP: "20.0.0.1",
    });

    // A new process: nothing is read again, nothing is written (the status is unchanged).
    const after = world({ clusters: [cluster({ status: recorded })] });
    const result = await after.reconcile();
    expect(after.infra.total()).toBe(0);
    // (The work is applied again only because this fake writer does not know the last process's
    // apply; the Applier recognises it on the apiserver.)
    expect(after.writer.writes.filter((x) => x.verb !== "apply")).toEqual([]);
    expect(result.requeueAfterMs).toBeGreaterThan(0);
    expect(result.requeueAfterMs).toBeLessThanOrEqual(INFRA_RECHECK_MS);
    // Seeded once: when the rechecks are due, every step is read again, not seeded again.
    after.tick(INFRA_RECHECK_MS);
    await after.reconcile();
    expect(AZURE_STEPS.map(([step]) => after.infra.calls[step])).toEqual([1, 1, 1, 1]);
  });

  it("after a restart reads the steps its status cannot vouch for", async () => {
    const before = world();
    await before.reconcile();
    const recorded = before.writer.lastStatus<HcpClusterStatus>()!;
    // Written for an older generation: everything is read.
    const older = world({ clusters: [cluster({ status: recorded, generation: 2 })] });
    await older.reconcile();
    expect(AZURE_STEPS.map(([step]) => older.infra.calls[step])).toEqual([1, 1, 1, 1]);
    // No address recorded: only the ingress (and what needs it) is read.
    const noAddress = world({
      clusters: [cluster({ status: { ...recorded, azure: { ...recorded.azure, ingressIP: undefined } } })],
    });
    await noAddress.reconcile();
    expect(AZURE_STEPS.map(([step]) => noAddress.infra.calls[step] ?? 0)).toEqual([0, 0, 0, 1]);
  });

  it("refuses a base domain that is not the region's zone, as a user error", async () => {
    const c = cluster();
    c.spec.dns.baseDomain = "example.org";
    const w = world({ clusters: [c] });
    await w.reconcile();
    expect(w.infra.calls.ensureDelegation).toBeUndefined();
    expect(condition(w.writer.lastStatus(), "DnsDelegated")).toMatchObject({ reason: "UnknownBaseDomain" });
    expect(condition(w.writer.lastStatus(), "Degraded")?.status).toBe("True");
  });

  it.each([
    ["no management cluster", [], "NoManagementCluster"],
    [
      "an unschedulable one",
      [{ ...managementCluster("mgmt-1"), spec: { ...managementCluster("mgmt-1").spec, schedulable: false } }],
      "NoManagementCluster",
    ],
    ["a full one", [managementCluster("mgmt-1", 0)], "NoCapacity"],
    [
      "one being deleted",
      [
        {
          ...managementCluster("mgmt-1"),
          metadata: { name: "mgmt-1", deletionTimestamp: "2026-01-01T00:00:00Z" },
        },
      ],
      "NoManagementCluster",
    ],
  ])("waits for room with %s: no Azure call, no retry, no requeue", async (_what, mcs, reason) => {
    const w = world({ mcs });
    expect(await w.reconcile()).toEqual({});
    expect(w.infra.total()).toBe(0);
    expect(condition(w.writer.lastStatus(), "Placed")).toMatchObject({ status: "False", reason });
  });

  it("counts a placement the informer does not show yet, so two clusters do not take the last slot", async () => {
    const w = world({
      clusters: [cluster({ name: "a" }), cluster({ name: "b" })],
      mcs: [managementCluster("mgmt-1", 1)],
    });
    // "a" is placed but its status write is not visible yet (the informer lags).
    w.writer.applyStatus = async () => Promise.resolve(undefined);
    await w.reconcile("a");
    await w.reconcile("b");
    expect(w.reconciler.memory.reservations.get("uid-a")?.managementCluster).toBe("mgmt-1");
    expect(w.reconciler.memory.reservations.has("uid-b")).toBe(false);
  });

  it("places a cluster once though its status write is not in the informer by the next reconcile", async () => {
    const w = world({ mcs: [managementCluster("mgmt-1"), managementCluster("mgmt-2")] });
    await w.reconcile();
    const placed = (w.writer.lastStatus() as HcpClusterStatus).managementCluster;
    expect(placed).toBeDefined();
    // Another cluster lands there meanwhile, so choosing again would now pick the other one; the
    // informer still holds demo as it was before its status write (a chaos run placed it twice).
    w.clusters.set(cluster({ name: "other", status: { managementCluster: placed } }));
    await w.reconcile();
    expect((w.writer.lastStatus() as HcpClusterStatus).managementCluster).toBe(placed);
    const workNamespaces = new Set(w.writer.of("apply").map((write) => write.namespace));
    expect([...workNamespaces]).toEqual([placed]);
    // Once the informer shows the placement, the reservation goes.
    w.clusters.set(cluster({ status: { managementCluster: placed } }));
    w.clusters.set(cluster({ name: "third" }));
    await w.reconcile("third");
    expect([...w.reconciler.memory.reservations.keys()]).toEqual(["uid-third"]);
  });

  it("refuses a downgrade below the running version", async () => {
    const c = cluster({ status: { version: "4.20.2" } });
    const w = world({ clusters: [c] });
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "ValidVersion")).toMatchObject({
      status: "False",
      reason: "DowngradeRefused",
    });
    expect(w.infra.total()).toBe(0);
  });

  it("refuses an upgrade that skips a minor version, saying which to take first", async () => {
    const c = cluster({ status: { version: "4.18.22" } });
    c.spec.version = { id: "4.20", channelGroup: "stable" };
    const w = world({ clusters: [c] });
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "ValidVersion")).toMatchObject({
      status: "False",
      reason: "UpgradeSkipsMinor",
      message: expect.stringContaining("to 4.19 first") as string,
    });
    expect(w.writer.of("apply")).toEqual([]);
  });

  it("changes nothing while paused: no Azure call, no apply, only status with Paused", async () => {
    const c = cluster({
      status: {
        conditions: [
          {
            type: "Placed",
            status: "True",
            reason: "Placed",
            message: "Placed on mgmt-1",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
        managementCluster: "mgmt-1",
      },
    });
    c.spec.paused = true;
    const w = world({ clusters: [c] });
    await w.reconcile();
    expect(w.infra.total()).toBe(0);
    expect(w.writer.of("apply")).toEqual([]);
    const status = w.writer.lastStatus<HcpClusterStatus>();
    expect(condition(status, "Paused")).toMatchObject({ status: "True" });
    expect(condition(status, "Placed")).toMatchObject({ status: "True" });
    expect(w.events.reasons()).toContain("Paused");
  });
});
