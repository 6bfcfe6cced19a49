/**
 * The cluster reconciler at the phase level, on fakes: listers instead of informers, a scripted
 * infrastructure, a recording writer and event recorder, a clock. Each test is one reconcile (or
 * two) and asserts what was written, called and recorded.
 */
import { describe, expect, it } from "vitest";
import type {
  ExternalAuth,
  HcpCluster,
  HcpClusterStatus,
  ManagementCluster,
  NodePool,
} from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, summariseWorkSpec, type ManifestWork } from "../api/work/v1.ts";
import { WORK_LABELS as LABELS } from "../api/v1alpha1/labels.ts";
import type { StepState } from "../hcp/steps.ts";
import { ReleaseCatalog } from "../releases/catalog.ts";
import { FakeLister } from "../../test/support/lister.ts";
import {
  MemoryBlobStore,
  MemorySigningKeys,
  RecordingEvents,
  RecordingWriter,
  ScriptedInfra,
  testContext,
  type InfraStep,
} from "../../test/support/fakes.ts";
import {
  sampleCluster,
  sampleFixedPool,
  sampleManagementCluster,
  sampleRegion,
} from "../../test/support/samples.ts";
import { BlobStoreError } from "../azure/blob.ts";
import type { HostedCluster } from "../api/hypershift/v1beta1/index.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { BlobIssuerDocuments, publicJwk } from "./oidc.ts";
import { RetryableStepError } from "./azure-step.ts";
import { carriedKeys, keysAnnotation } from "./etcd-encryption.ts";
import { ClusterReconciler } from "./reconcile.ts";
import { MANAGEMENT_CLUSTER_INDEX, byManagementCluster } from "../hcp/indexes.ts";
import { AZURE_POLL_MS, CLUSTER_UID_INDEX, INFRA_RECHECK_MS } from "./scope.ts";
import { CLUSTER_FINALIZER } from "../api/v1alpha1/index.ts";

const RECHECK_MS = 60_000;
const ISSUER_BASE = "https://oidc.example.com/";

const catalog = new ReleaseCatalog([
  {
    version: "4.19.7",
    image: "quay.io/openshift-release-dev/ocp-release:4.19.7-x86_64",
    channelGroups: ["stable"],
  },
  {
    version: "4.20.2",
    image: "quay.io/openshift-release-dev/ocp-release:4.20.2-x86_64",
    channelGroups: ["stable"],
  },
]);

function cluster(
  overrides: { name?: string; status?: HcpClusterStatus; generation?: number } = {},
): HcpCluster {
  const c = sampleCluster();
  const name = overrides.name ?? "demo";
  c.metadata = {
    name,
    namespace: "default",
    uid: `uid-${name}`,
    generation: overrides.generation ?? 1,
    finalizers: [CLUSTER_FINALIZER],
  };
  if (overrides.status) c.status = overrides.status;
  return c;
}

function managementCluster(name: string, capacity = 50): ManagementCluster {
  const mc = sampleManagementCluster("mgmt-1");
  return {
    ...mc,
    metadata: { name },
    spec: { ...mc.spec, consumerName: name, capacity: { maxHostedClusters: capacity } },
  };
}

function world(
  opts: {
    clusters?: HcpCluster[];
    mcs?: ManagementCluster[];
    pools?: NodePool[];
    works?: ManifestWork[];
    budget?: { perSecond: number; burst: number };
  } = {},
) {
  let now = 1_000_000;
  const infra = new ScriptedInfra();
  const writer = new RecordingWriter();
  const events = new RecordingEvents();
  const clusters = new FakeLister(opts.clusters ?? [cluster()], {
    [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster,
  });
  const works = new FakeLister((opts.works ?? []).map(summariseWorkSpec), {
    [CLUSTER_UID_INDEX]: (w) => [w.metadata.labels?.[LABELS.clusterUid] ?? ""],
  });
  const blobs = new MemoryBlobStore();
  const keys = new MemorySigningKeys();
  const reconciler = new ClusterReconciler(
    {
      clusters,
      nodePools: new FakeLister(opts.pools ?? []),
      externalAuths: new FakeLister<ExternalAuth>([]),
      managementClusters: new FakeLister(opts.mcs ?? [managementCluster("mgmt-1")]),
      works,
      releases: () => catalog,
      infra,
      parentZone: { subscriptionId: "s", resourceGroup: "rg", name: "hcp.example.com" },
      region: sampleRegion(),
      oidc: { issuerBaseURL: ISSUER_BASE, keys, documents: new BlobIssuerDocuments(blobs) },
      writer,
      events,
      userErrorRecheckMs: RECHECK_MS,
      ...(opts.budget && { infraRecheckBudget: opts.budget }),
    },
    () => now,
  );
  const reconcile = (name = "demo") =>
    reconciler.reconcile(testContext(), { cluster: "service", namespace: "default", name });
  /** The next reconcile sees what the last one wrote to status, as the informer would. */
  const observeStatus = (name = "demo") => {
    const c = clusters.get("default", name)!;
    const status = writer
      .of("status")
      .filter((w) => w.name === name)
      .at(-1)?.body as HcpClusterStatus | undefined;
    if (status) clusters.set({ ...c, status });
  };
  const tick = (ms: number) => (now += ms);
  return {
    infra,
    writer,
    events,
    clusters,
    works,
    blobs,
    keys,
    reconciler,
    reconcile,
    observeStatus,
    tick,
  };
}

const condition = (status: HcpClusterStatus | undefined, type: string) =>
  status?.conditions?.find((c) => c.type === type);

const AZURE_STEPS: Array<[InfraStep, string]> = [
  ["ensureResourceGroup", "ResourceGroupReady"],
  ["ensureDnsZone", "DnsZoneReady"],
  ["ensureDelegation", "DnsDelegated"],
  ["ensureIngress", "IngressReady"],
];

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
    // An install is told by its failures and its end: the steps that became True are in the
    // conditions, not events; the work's creation is one; no Progressing echo.
    expect(w.events.reasons()).toEqual(["HostedClusterCreated"]);
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

  describe("the OIDC issuer", () => {
    const issuerOf = (c: HcpCluster) => `${ISSUER_BASE}${c.spec.platform.azure.tenantId}/uid-demo`;

    it("stores the key, publishes both documents and puts the issuer on the HostedCluster and the status", async () => {
      const w = world();
      await w.reconcile();
      const c = w.clusters.get("default", "demo")!;
      const issuer = issuerOf(c);
      const path = issuer.slice(ISSUER_BASE.length);
      const discovery = JSON.parse(w.blobs.blobs.get(`${path}/.well-known/openid-configuration`) ?? "{}");
      expect(discovery).toMatchObject({ issuer, jwks_uri: `${issuer}/openid/v1/jwks` });
      const jwks = JSON.parse(w.blobs.blobs.get(`${path}/openid/v1/jwks`) ?? "{}");
      expect(jwks.keys).toEqual([publicJwk(w.keys.keys.get("uid-demo")!)]);
      const status = w.writer.lastStatus<HcpClusterStatus>();
      expect(status?.issuerURL).toBe(issuer);
      expect(condition(status, "OidcIssuerReady")).toMatchObject({ status: "True", reason: "Published" });
      const [work] = w.writer.of("apply", "ManifestWork");
      const manifests = (work?.body as ManifestWork).spec?.workload?.manifests ?? [];
      const hc = manifests.find((m) => m.kind === "HostedCluster") as unknown as HostedCluster;
      expect(hc.spec).toMatchObject({
        issuerURL: issuer,
        serviceAccountSigningKey: { name: "sa-signing-key" },
      });
      const secret = manifests.find((m) => m.metadata?.name === "sa-signing-key") as unknown as KubeObject & {
        data: Record<string, string>;
      };
      expect(Buffer.from(secret.data["key"] ?? "", "base64").toString()).toBe(w.keys.keys.get("uid-demo"));
    });

    it("writes a document only when what is published differs, and says the same either way", async () => {
      const w = world();
      await w.reconcile();
      const writes = () => w.blobs.calls.filter((x) => x.verb === "write").length;
      expect(writes()).toBe(2);
      const published = condition(w.writer.lastStatus(), "OidcIssuerReady");
      // A new generation reads again: nothing changed, nothing written.
      w.clusters.set({
        ...w.clusters.get("default", "demo")!,
        metadata: { ...cluster().metadata, generation: 2 },
      });
      await w.reconcile();
      expect(w.blobs.calls.filter((x) => x.verb === "read")).toHaveLength(4);
      expect(writes()).toBe(2);
      // The condition does not tell the look that wrote from the one that found: each recheck
      // and restart would otherwise rewrite the status.
      expect(condition(w.writer.lastStatus(), "OidcIssuerReady")?.message).toBe(published?.message);
      // Someone changed the JWKS: it is put back at the next look.
      const jwks = [...w.blobs.blobs.keys()].find((k) => k.endsWith("jwks"))!;
      w.blobs.blobs.set(jwks, "{}");
      w.clusters.set({
        ...w.clusters.get("default", "demo")!,
        metadata: { ...cluster().metadata, generation: 3 },
      });
      await w.reconcile();
      expect(writes()).toBe(3);
      expect(w.keys.made).toBe(1);
    });

    it("shows a storage fault in OidcIssuerReady and backs off; the HostedCluster still gets its issuer", async () => {
      const w = world();
      w.blobs.failure = new BlobStoreError(
        0,
        "ServiceUnreachable",
        "could not reach https://storage.test/$web: ECONNREFUSED",
      );
      await expect(w.reconcile()).rejects.toThrow(RetryableStepError);
      const status = w.writer.lastStatus<HcpClusterStatus>();
      expect(condition(status, "OidcIssuerReady")).toMatchObject({
        status: "False",
        reason: "StorageUnreachable",
        message: expect.stringContaining("ECONNREFUSED"),
      });
      expect(condition(status, "Ready")).toMatchObject({ status: "False" });
      expect(w.writer.of("apply", "ManifestWork")).toHaveLength(1);
      w.blobs.failure = undefined;
      w.observeStatus();
      await w.reconcile();
      expect(condition(w.writer.lastStatus(), "OidcIssuerReady")).toMatchObject({ status: "True" });
      expect(w.keys.made).toBe(1);
    });
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

  describe("deletion", () => {
    const deleting = (c: HcpCluster): HcpCluster => ({
      ...c,
      metadata: { ...c.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
    });

    it("deletes the node pools first and waits for them", async () => {
      const pool = { ...sampleFixedPool(), metadata: { name: "workers", namespace: "default", uid: "p1" } };
      pool.spec.clusterRef = { name: "demo" };
      const w = world({ clusters: [deleting(cluster())], pools: [pool] });
      await w.reconcile();
      expect(w.writer.of("delete").map((d) => d.kind)).toEqual(["NodePool"]);
      expect(w.infra.total()).toBe(0);
      expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({ reason: "DeletingNodePools" });
    });

    it("does not go on to the works when deleting the node pools failed", async () => {
      const pool = { ...sampleFixedPool(), metadata: { name: "workers", namespace: "default", uid: "p1" } };
      pool.spec.clusterRef = { name: "demo" };
      const work = {
        apiVersion: "work.open-cluster-management.io/v1",
        kind: "ManifestWork",
        metadata: { name: "uid-demo", namespace: "mgmt-1", labels: { [LABELS.clusterUid]: "uid-demo" } },
        spec: { workload: { manifests: [] } },
      } as ManifestWork;
      const w = world({ clusters: [deleting(cluster())], pools: [pool], works: [work] });
      w.writer.delete = () => Promise.reject(new Error("apiserver unavailable"));
      await expect(w.reconcile()).rejects.toThrow("apiserver unavailable");
      expect(w.infra.total()).toBe(0);
      expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({ reason: "DeletingNodePools" });
    });

    it("removes Azure resources, then the finalizer, and forgets what it held for the cluster", async () => {
      const w = world();
      w.infra.script.ensureIngress = {
        state: "failed",
        reason: "QuotaExceeded",
        message: "no",
        userActionRequired: true,
      };
      await w.reconcile();
      expect(w.reconciler.memory.holds.size).toBe(1);
      // Three Azure steps and the issuer found ready; the ingress found not ready is remembered too
      // (never seeded from status).
      expect(w.reconciler.memory.verified.size).toBe(5);
      expect(w.blobs.blobs.size).toBe(2);
      w.clusters.set(deleting(w.clusters.get("default", "demo")!));
      expect(await w.reconcile()).toEqual({});
      expect(w.infra.calls.deleteAll).toBe(1);
      // The issuer's documents and its key go before the finalizer.
      expect(w.blobs.blobs.size).toBe(0);
      expect(w.keys.keys.size).toBe(0);
      expect(w.writer.of("removeFinalizer")).toHaveLength(1);
      expect(w.reconciler.memory.holds.size).toBe(0);
      expect(w.reconciler.memory.reservations.size).toBe(0);
      expect(w.reconciler.memory.verified.size).toBe(0);
      expect(w.events.reasons()).toContain("Deleted");
    });

    it("deletes the work it applied even when the informer has not shown it yet, and waits for it", async () => {
      const w = world();
      await w.reconcile();
      expect(w.writer.of("apply", "ManifestWork")).toHaveLength(1);
      // The works informer lags (a watch relisting after an apiserver restart): it shows none.
      expect(w.works.list()).toEqual([]);
      w.observeStatus();
      w.clusters.set(deleting(w.clusters.get("default", "demo")!));
      await w.reconcile();
      expect(w.writer.of("delete", "ManifestWork")).toMatchObject([
        { name: "uid-demo", namespace: "mgmt-1" },
      ]);
      expect(w.writer.of("removeFinalizer")).toEqual([]);
      expect(w.infra.calls.deleteAll).toBeUndefined();
      expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({ reason: "DeletingHostedCluster" });
      // The agent confirmed: the work is gone, and only then does the rest go.
      w.writer.vanish(ManifestWorkResource, { name: "uid-demo", namespace: "mgmt-1" });
      await w.reconcile();
      expect(w.infra.calls.deleteAll).toBe(1);
      expect(w.writer.of("removeFinalizer")).toHaveLength(1);
    });

    it("keeps the finalizer while the issuer's documents cannot be removed, and says why", async () => {
      const w = world({ clusters: [deleting(cluster())] });
      w.blobs.failure = new BlobStoreError(503, "ServerBusy", "could not delete: HTTP 503 ServerBusy");
      await expect(w.reconcile()).rejects.toThrow("ServerBusy");
      expect(w.writer.of("removeFinalizer")).toEqual([]);
      expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({ reason: "DeletingOidcIssuer" });
      w.blobs.failure = undefined;
      expect(await w.reconcile()).toEqual({});
      expect(w.writer.of("removeFinalizer")).toHaveLength(1);
    });

    it("keeps the finalizer while an Azure deletion runs", async () => {
      const w = world({ clusters: [deleting(cluster())] });
      w.infra.script.deleteAll = {
        state: "pending",
        reason: "InProgress",
        message: "deleting the zone",
        retryAfterMs: 2_000,
      };
      expect(await w.reconcile()).toEqual({ requeueAfterMs: 2_000 });
      expect(w.writer.of("removeFinalizer")).toEqual([]);
      expect(condition(w.writer.lastStatus(), "Deleting")).toMatchObject({
        reason: "DeletingAzureResources",
      });
    });
  });
});

describe("customer-managed etcd keys", () => {
  const KMS_IDENTITY =
    "/subscriptions/s/resourceGroups/ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/kms";
  const key = (keyVersion: string) => ({ keyVaultName: "kv-demo", keyName: "etcd", keyVersion });

  function encrypted(version: string, generation = 1): HcpCluster {
    const c = cluster({ generation });
    c.spec.platform.azure.identities.controlPlaneOperators.kms = KMS_IDENTITY;
    c.spec.etcd = {
      dataEncryption: {
        keyManagementMode: "CustomerManaged",
        customerManaged: { kms: { vaultName: "kv-demo", activeKey: { name: "etcd", version } } },
      },
    };
    return c;
  }

  const lastWork = (w: ReturnType<typeof world>) =>
    w.writer.of("apply", "ManifestWork").at(-1)?.body as ManifestWork;
  const keysIn = (work: ManifestWork) => hostedIn(work).spec.secretEncryption?.kms?.azure;
  const hostedIn = (work: ManifestWork) =>
    work.spec!.workload!.manifests!.find((m) => m.kind === "HostedCluster") as unknown as HostedCluster;

  const raw = (name: string, value: unknown) => ({
    name,
    fieldValue: { type: "JsonRaw" as const, jsonRaw: JSON.stringify(value) },
  });
  /** HyperShift's condition `type` as `[status, reason, message]`, about `observedGeneration`. */
  const verdict = (type: string, [status, reason, message]: string[], observedGeneration: number) => ({
    type,
    status,
    reason,
    message,
    observedGeneration,
    lastTransitionTime: "2026-08-01T00:00:00Z",
  });

  /**
   * The work as the informer shows it once the agent applied `generation` of it: the HostedCluster
   * at `hcGeneration` carrying the work's keys, and HyperShift's verdicts on it.
   */
  function applied(
    work: ManifestWork,
    generation: number,
    hc: { generation: number; reEncrypted?: boolean; kmsValid?: [string, string, string] },
  ): ManifestWork {
    const azure = keysIn(work);
    const kms = hc.kmsValid ?? ["True", "AsExpected", "All is well"];
    const upToDate = hc.reEncrypted
      ? ["True", "ReEncryptionCompleted", "done"]
      : ["False", "ReEncryptionInProgress", "busy"];
    const values = [
      raw("available", verdict("Available", ["True", "AsExpected", "ok"], hc.generation)),
      { name: "generation", fieldValue: { type: "Integer" as const, integer: hc.generation } },
      raw("validConfiguration", verdict("ValidConfiguration", ["True", "AsExpected", "ok"], hc.generation)),
      raw("validAzureKMSConfig", verdict("ValidAzureKMSConfig", kms, hc.generation)),
      raw("etcdDataEncryptionUpToDate", verdict("EtcdDataEncryptionUpToDate", upToDate, hc.generation)),
      ...(azure?.activeKey ? [raw("kmsActiveKey", azure.activeKey)] : []),
      ...(azure?.backupKey ? [raw("kmsBackupKey", azure.backupKey)] : []),
    ];
    return {
      ...work,
      metadata: { ...work.metadata, generation },
      status: {
        conditions: [
          {
            type: "Applied",
            status: "True",
            reason: "Applied",
            message: "",
            observedGeneration: generation,
            lastTransitionTime: "2026-08-01T00:00:00Z",
          },
        ],
        resourceStatus: {
          manifests: [
            {
              resourceMeta: {
                ordinal: 3,
                group: "hypershift.openshift.io",
                version: "v1beta1",
                kind: "HostedCluster",
                resource: "hostedclusters",
                name: hostedIn(work).metadata.name ?? "",
                namespace: hostedIn(work).metadata.namespace ?? "",
              },
              statusFeedback: { values },
              conditions: [],
            },
          ],
        },
      },
    };
  }

  it("carries the key, keeps the old version as backup until HyperShift has re-encrypted, then drops it", async () => {
    const w = world({ clusters: [encrypted("1")] });
    await w.reconcile();
    const first = lastWork(w);
    expect(keysIn(first)).toMatchObject({ activeKey: key("1") });
    expect(keysIn(first)?.backupKey).toBeUndefined();
    expect(condition(w.writer.lastStatus(), "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "False",
      reason: "WaitingForHyperShift",
    });
    w.works.set(summariseWorkSpec(applied(first, 1, { generation: 1, reEncrypted: true })));

    // The customer rotates to version 2: the old version stays readable as the backup key.
    w.clusters.set(encrypted("2", 2));
    await w.reconcile();
    const rotating = lastWork(w);
    expect(keysIn(rotating)).toMatchObject({
      activeKey: key("2"),
      backupKey: key("1"),
    });
    expect(condition(w.writer.lastStatus(), "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "False",
      reason: "ReEncryptionInProgress",
    });
    // Still re-encrypting, and a third version asked for meanwhile: nothing moves (one backup key).
    w.works.set(summariseWorkSpec(applied(rotating, 2, { generation: 2 })));
    w.clusters.set(encrypted("3", 3));
    await w.reconcile();
    // The work only records that HyperShift found version 2 usable; the HostedCluster is unchanged.
    expect(keysIn(lastWork(w))).toEqual(keysIn(rotating));
    expect(carriedKeys(lastWork(w))).toEqual({ active: key("2"), backup: key("1"), activeUsable: true });
    expect(condition(w.writer.lastStatus(), "EtcdDataEncryptionUpToDate")?.message).toContain(
      "version 3 rotates in once it is done",
    );
    // Re-encrypted with version 2: version 3 rotates in, 2 its backup; 1 is gone.
    w.works.set(summariseWorkSpec(applied(lastWork(w), 3, { generation: 2, reEncrypted: true })));
    await w.reconcile();
    expect(keysIn(lastWork(w))).toMatchObject({
      activeKey: key("3"),
      backupKey: key("2"),
    });
    // A restarted controller reads the rotation from the work alone and carries on.
    const restarted = world({
      clusters: [encrypted("3", 3)],
      works: [applied(lastWork(w), 3, { generation: 3, reEncrypted: true })],
    });
    await restarted.reconcile();
    const settled = keysIn(lastWork(restarted));
    expect(settled?.activeKey).toEqual(key("3"));
    expect(settled?.backupKey).toBeUndefined();
    expect(condition(restarted.writer.lastStatus(), "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "True",
    });
  });

  it("replaces a key HyperShift refuses and never found usable, keeping the backup: a mistyped version is fixed", async () => {
    const w = world({ clusters: [encrypted("1")] });
    await w.reconcile();
    w.works.set(summariseWorkSpec(applied(lastWork(w), 1, { generation: 1, reEncrypted: true })));
    w.clusters.set(encrypted("2x", 2));
    await w.reconcile();
    const mistyped = lastWork(w);
    expect(keysIn(mistyped)).toMatchObject({ activeKey: key("2x"), backupKey: key("1") });
    const refused: [string, string, string] = ["False", "AzureError", "failed to encrypt data using KMS"];
    w.works.set(summariseWorkSpec(applied(mistyped, 2, { generation: 2, kmsValid: refused })));
    w.clusters.set(encrypted("2", 3));
    await w.reconcile();
    expect(keysIn(lastWork(w))).toMatchObject({ activeKey: key("2"), backupKey: key("1") });
    // A key HyperShift did use is another matter: it becomes the backup, never dropped.
    const usable = world({
      clusters: [encrypted("3", 4)],
      works: [applied(lastWork(w), 3, { generation: 3, kmsValid: refused })],
    });
    usable.works.set(
      summariseWorkSpec({
        ...applied(lastWork(w), 3, { generation: 3, kmsValid: refused }),
        metadata: {
          ...lastWork(w).metadata,
          generation: 3,
          annotations: keysAnnotation({ active: key("2"), backup: key("1"), activeUsable: true }),
        },
      }),
    );
    await usable.reconcile();
    expect(keysIn(lastWork(usable))).toMatchObject({ activeKey: key("2"), backupKey: key("1") });
  });

  it("decides nothing from a cached work older than its own last write", async () => {
    const w = world({ clusters: [encrypted("1")] });
    await w.reconcile();
    w.works.set(summariseWorkSpec(applied(lastWork(w), 1, { generation: 1, reEncrypted: true })));
    w.clusters.set(encrypted("2", 2));
    await w.reconcile();
    expect(w.writer.of("apply", "ManifestWork")).toHaveLength(2);
    // The informer still shows generation 1 (with version 1 alone, re-encrypted): a rotation to 3
    // decided from it would drop version 2, which may already encrypt data.
    w.clusters.set(encrypted("3", 3));
    // Retried with backoff (the watch brings it back too); generation 3 is not observed meanwhile.
    await expect(w.reconcile()).rejects.toBeInstanceOf(RetryableStepError);
    expect(w.writer.of("apply", "ManifestWork")).toHaveLength(2);
    expect(w.writer.lastStatus<HcpClusterStatus>()?.observedGeneration).not.toBe(3);
  });

  it("a key HyperShift cannot use holds Ready and degrades the cluster with HyperShift's reason and message", async () => {
    const w = world({ clusters: [encrypted("0000")] });
    await w.reconcile();
    const message =
      "failed to encrypt data using KMS (key: etcd/0000): KeyNotFound: A key with (name/id) etcd/0000 was not found in this key vault";
    w.works.set(
      summariseWorkSpec(
        applied(lastWork(w), 1, { generation: 4, kmsValid: ["False", "AzureError", message] }),
      ),
    );
    w.observeStatus();
    await w.reconcile();
    const status = w.writer.lastStatus<HcpClusterStatus>();
    expect(condition(status, "HostedClusterValid")).toMatchObject({
      status: "False",
      reason: "HostedClusterAzureError",
      message: `The etcd encryption key kv-demo/etcd version 0000 cannot be used: ${message}`,
    });
    expect(condition(status, "Degraded")).toMatchObject({
      status: "True",
      reason: "HostedClusterAzureError",
    });
    expect(condition(status, "Degraded")?.message).toContain(message);
    expect(condition(status, "Progressing")?.status).toBe("False");
    expect(condition(status, "Ready")?.status).toBe("False");
  });

  it("without a customer key only ValidConfiguration counts, and only about the generation the agent read", async () => {
    const w = world();
    await w.reconcile();
    const work = applied(lastWork(w), 1, {
      generation: 2,
      kmsValid: ["Unknown", "StatusUnknown", "Azure KMS is not configured"],
    });
    w.works.set(summariseWorkSpec(work));
    w.observeStatus();
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "HostedClusterValid")).toMatchObject({ status: "True" });
    // HyperShift's verdict is about an older generation than the agent read: wait for its word.
    const values = work.status!.resourceStatus!.manifests![0]!.statusFeedback!.values!;
    values[1] = { name: "generation", fieldValue: { type: "Integer", integer: 3 } };
    w.works.set(summariseWorkSpec(work));
    w.observeStatus();
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "HostedClusterValid")).toMatchObject({
      status: "False",
      reason: "WaitingForHyperShift",
    });
  });
});
