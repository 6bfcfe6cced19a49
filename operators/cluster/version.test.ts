/**
 * The cluster reconciler and the update graph, on fakes and a fake clock: the release it asks
 * HyperShift for (the work's HostedCluster image and status.desiredVersion), upgrades it holds and
 * why, automatic patch upgrades, and a release's end of life passing under a running cluster.
 */
import { describe, expect, it } from "vitest";
import type { ExternalAuth, HcpCluster, HcpClusterStatus, NodePool } from "../api/v1alpha1/index.ts";
import type { CachedManifestWork, ManifestWork } from "../api/work/v1.ts";
import { MANAGEMENT_CLUSTER_INDEX, byManagementCluster } from "../hcp/indexes.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { ReleaseCatalog } from "../releases/catalog.ts";
import { FakeLister } from "../../test/support/lister.ts";
import {
  MemoryBlobStore,
  MemorySigningKeys,
  RecordingEvents,
  RecordingWriter,
  ScriptedInfra,
  testContext,
} from "../../test/support/fakes.ts";
import {
  sampleCluster,
  sampleFixedPool,
  sampleManagementCluster,
  sampleRegion,
} from "../../test/support/samples.ts";
import { BlobIssuerDocuments } from "./oidc.ts";
import { ClusterReconciler } from "./reconcile.ts";
import { CLUSTER_UID_INDEX } from "./scope.ts";
import { CLUSTER_FINALIZER } from "../api/v1alpha1/index.ts";
import { END_OF_LIFE_RECHECK_MS } from "./version.ts";

const NOW = Date.parse("2026-11-27T12:00:00Z");
const DAY = 24 * 3600 * 1000;

/** 4.19.9 is reached from 4.19.7 only; 4.20.2 from 4.19.9 only; 4.19 ends ten days from NOW. */
function catalogText(extra = ""): string {
  const eol = new Date(NOW + 10 * DAY).toISOString();
  return `
releases:
  - {version: 4.18.22, image: "img:4.18.22"}
  - {version: 4.19.7, image: "img:4.19.7", endOfLifeTimestamp: "${eol}"}
  - {version: 4.20.2, image: "img:4.20.2", upgradesFrom: [4.19.9]}
${extra}`;
}
const WITH_4_19_9 = `  - {version: 4.19.9, image: "img:4.19.9", upgradesFrom: [4.19.7], endOfLifeTimestamp: "${new Date(NOW + 10 * DAY).toISOString()}"}\n`;

function cluster(version: HcpCluster["spec"]["version"], status?: HcpClusterStatus): HcpCluster {
  const c = sampleCluster();
  c.metadata = {
    name: "demo",
    namespace: "default",
    uid: "uid-demo",
    generation: 1,
    finalizers: [CLUSTER_FINALIZER],
  };
  c.spec.version = version;
  delete c.spec.placement;
  if (status) c.status = status;
  return c;
}

function pool(name: string, version?: string): NodePool {
  const p = sampleFixedPool();
  p.metadata = { name, namespace: "default", uid: `uid-${name}` };
  p.spec.clusterRef.name = "demo";
  if (version) p.spec.version = { id: version };
  else delete p.spec.version;
  return p;
}

function world(c: HcpCluster, opts: { pools?: NodePool[]; catalog?: string } = {}) {
  let now = NOW;
  let catalog = ReleaseCatalog.parse(opts.catalog ?? catalogText());
  const writer = new RecordingWriter();
  const events = new RecordingEvents();
  const clusters = new FakeLister([c], { [MANAGEMENT_CLUSTER_INDEX]: byManagementCluster });
  const mc = sampleManagementCluster("mgmt-1");
  const reconciler = new ClusterReconciler(
    {
      clusters,
      nodePools: new FakeLister(opts.pools ?? []),
      externalAuths: new FakeLister<ExternalAuth>([]),
      managementClusters: new FakeLister([{ ...mc, spec: { ...mc.spec, consumerName: "mgmt-1" } }]),
      works: new FakeLister<CachedManifestWork>([], {
        [CLUSTER_UID_INDEX]: (w) => [w.metadata.labels?.[WORK_LABELS.clusterUid] ?? ""],
      }),
      releases: () => catalog,
      infra: new ScriptedInfra(),
      parentZone: { subscriptionId: "s", resourceGroup: "rg", name: "hcp.example.com" },
      region: sampleRegion(),
      oidc: {
        issuerBaseURL: "https://oidc.example.com/",
        keys: new MemorySigningKeys(),
        documents: new BlobIssuerDocuments(new MemoryBlobStore()),
      },
      writer,
      events,
    },
    () => now,
  );
  return {
    writer,
    events,
    reconcile: () =>
      reconciler.reconcile(testContext(), { cluster: "service", namespace: "default", name: "demo" }),
    /** The next reconcile sees the last status written, and the control plane running `version`. */
    observe(version?: string) {
      const status = writer.lastStatus<HcpClusterStatus>();
      const current = clusters.get("default", "demo")!;
      clusters.set({ ...current, status: { ...status, ...(version ? { version } : {}) } });
    },
    setCatalog: (text: string) => (catalog = ReleaseCatalog.parse(text)),
    tick: (ms: number) => (now += ms),
    /** The release image of the HostedCluster in the last work applied. */
    appliedImage(): string | undefined {
      const work = writer.of("apply", "ManifestWork").at(-1)?.body as ManifestWork | undefined;
      const hc = work?.spec?.workload?.manifests?.find((m) => m.kind === "HostedCluster") as
        { spec: { release: { image: string } } } | undefined;
      return hc?.spec.release.image;
    },
  };
}

const condition = (status: HcpClusterStatus | undefined, type: string) =>
  status?.conditions?.find((c) => c.type === type);

describe("the cluster's release on the update graph", () => {
  it("asks HyperShift for the first hop of an upgrade that takes several, and says so once", async () => {
    const w = world(cluster({ id: "4.20" }, { version: "4.19.7", desiredVersion: "4.19.7" }), {
      catalog: catalogText(WITH_4_19_9),
    });
    await w.reconcile();
    const status = w.writer.lastStatus<HcpClusterStatus>();
    expect(status?.desiredVersion).toBe("4.19.9");
    expect(w.appliedImage()).toBe("img:4.19.9");
    expect(condition(status, "ValidVersion")).toMatchObject({
      status: "True",
      message: "4.20 resolves to 4.20.2, by way of 4.19.9 → 4.20.2 (img:4.19.9)",
    });
    expect(w.events.events.filter((e) => e.reason === "Upgrading")).toEqual([
      expect.objectContaining({
        type: "Normal",
        message: "Upgrading from 4.19.7 to 4.19.9: spec.version.id 4.20 (on the way to 4.20.2)",
      }),
    ]);
    // HyperShift completes the hop: the next one starts.
    w.observe("4.19.9");
    await w.reconcile();
    expect(w.appliedImage()).toBe("img:4.20.2");
    expect(w.events.events.filter((e) => e.reason === "Upgrading").map((e) => e.message)).toEqual([
      "Upgrading from 4.19.7 to 4.19.9: spec.version.id 4.20 (on the way to 4.20.2)",
      "Upgrading from 4.19.9 to 4.20.2: spec.version.id 4.20",
    ]);
  });

  it("holds an upgrade the graph has no edge for, naming the edges it has", async () => {
    const w = world(cluster({ id: "4.20" }, { version: "4.19.7" }));
    await w.reconcile();
    const status = w.writer.lastStatus<HcpClusterStatus>();
    expect(condition(status, "ValidVersion")).toMatchObject({
      status: "False",
      reason: "NoUpdateEdge",
      message:
        "no release of 4.20 in channel group stable can be reached from 4.19.7: the update graph of channel group stable has no edge from 4.19.7 to 4.20.2 (it upgrades from 4.19.9)",
    });
    expect(condition(status, "Degraded")).toMatchObject({ status: "True", reason: "NoUpdateEdge" });
    expect(w.writer.of("apply", "ManifestWork")).toEqual([]);
  });

  it("holds an upgrade that would leave a node pool more than two minors behind, naming the pool", async () => {
    const pools = [pool("follows"), pool("old", "4.16.3"), pool("recent", "4.18.22")];
    const w = world(cluster({ id: "4.19" }, { version: "4.18.22" }), { pools });
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "ValidVersion")).toMatchObject({
      status: "False",
      reason: "NodePoolsTooFarBehind",
      message:
        "Version 4.19.7 would leave node pools too far behind; upgrade them first (node pool old: nodes on 4.16 may run at most 2 minor versions behind their control plane on 4.19)",
    });
  });

  it("moves a pinned release to a newer patch once the catalog offers it, with upgradePolicy AutomaticPatch only", async () => {
    const status = { version: "4.19.7", desiredVersion: "4.19.7" };
    const manual = world(cluster({ id: "4.19.7" }, status));
    const auto = world(cluster({ id: "4.19.7", upgradePolicy: "AutomaticPatch" }, status));
    for (const w of [manual, auto]) {
      await w.reconcile();
      expect(w.appliedImage()).toBe("img:4.19.7");
      w.observe();
      w.setCatalog(catalogText(WITH_4_19_9));
      await w.reconcile();
    }
    expect(manual.writer.lastStatus<HcpClusterStatus>()?.desiredVersion).toBe("4.19.7");
    expect(manual.writer.of("apply", "ManifestWork")).toHaveLength(1);
    expect(auto.writer.lastStatus<HcpClusterStatus>()?.desiredVersion).toBe("4.19.9");
    expect(auto.appliedImage()).toBe("img:4.19.9");
    expect(auto.events.events.find((e) => e.reason === "Upgrading")?.message).toBe(
      "Upgrading from 4.19.7 to 4.19.9: automatic patch upgrade",
    );
  });

  it("keeps a cluster running when its release reaches its end of life, and says so as it happens", async () => {
    const w = world(cluster({ id: "4.19" }, { version: "4.19.7", desiredVersion: "4.19.7" }));
    const result = await w.reconcile();
    // Looked at again by the time the end of life passes, with nothing else changing.
    expect(result.requeueAfterMs).toBeLessThanOrEqual(END_OF_LIFE_RECHECK_MS);
    expect(condition(w.writer.lastStatus(), "VersionEndOfLife")).toMatchObject({
      status: "False",
      reason: "Supported",
      message: "OpenShift 4.19.7 is supported until 2026-12-07",
    });
    w.observe();
    w.tick(10 * DAY);
    await w.reconcile();
    const status = w.writer.lastStatus<HcpClusterStatus>();
    expect(condition(status, "VersionEndOfLife")).toMatchObject({ status: "True", reason: "EndOfLife" });
    expect(condition(status, "VersionEndOfLife")?.message).toContain(
      "OpenShift 4.19.7 reached its end of life on 2026-12-07: the control plane keeps running",
    );
    expect(condition(status, "ValidVersion")?.status).toBe("True");
    expect(w.appliedImage()).toBe("img:4.19.7");
    expect(w.events.events.filter((e) => e.reason === "EndOfLife")).toEqual([
      expect.objectContaining({ type: "Warning" }),
    ]);
  });

  it("says nothing of an end of life until the control plane reports its version, and makes no event of a supported one", async () => {
    const w = world(cluster({ id: "4.19" }));
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "VersionEndOfLife")).toBeUndefined();
    w.observe("4.19.7");
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "VersionEndOfLife")).toMatchObject({ status: "False" });
    expect(w.events.reasons()).not.toContain("Recovered");
  });

  it("refuses to install a new cluster on a release past its end of life", async () => {
    const w = world(cluster({ id: "4.19" }));
    w.tick(11 * DAY);
    await w.reconcile();
    expect(condition(w.writer.lastStatus(), "ValidVersion")).toMatchObject({
      status: "False",
      reason: "EndOfLife",
      message:
        "OpenShift 4.19 reached its end of life on 2026-12-07: no new cluster runs it and no cluster moves to it; offered in channel group stable: 4.18, 4.20",
    });
    expect(w.writer.of("apply", "ManifestWork")).toEqual([]);
  });
});

describe("automatic patch upgrades inside the cluster's maintenance window", () => {
  // NOW is Friday 2026-11-27 12:00Z; the window opens Saturday 02:00 Berlin time (01:00Z).
  const maintenance = {
    timeZone: "Europe/Berlin",
    windows: [{ days: ["Saturday" as const], start: "02:00", end: "06:00" }],
  };
  const running = { version: "4.19.7", desiredVersion: "4.19.7" };

  it("waits for the window, says why on the cluster, and begins once it opens", async () => {
    const c = cluster({ id: "4.19.7", upgradePolicy: "AutomaticPatch" }, running);
    c.spec.maintenance = maintenance;
    const w = world(c, { catalog: catalogText(WITH_4_19_9) });
    const waiting = await w.reconcile();
    expect(w.appliedImage()).toBe("img:4.19.7");
    expect(w.writer.lastStatus<HcpClusterStatus>()?.desiredVersion).toBe("4.19.7");
    expect(condition(w.writer.lastStatus(), "MaintenanceDeferred")).toMatchObject({
      status: "True",
      reason: "OutsideMaintenanceWindow",
      message:
        "The automatic patch upgrade from 4.19.7 to 4.19.9 waits: outside the cluster's maintenance windows; next window opens 2026-11-28T01:00:00Z",
    });
    expect(waiting.requeueAfterMs).toBeLessThanOrEqual(13 * 3600 * 1000);
    expect(w.events.reasons()).not.toContain("Upgrading");

    w.observe();
    w.tick(13.5 * 3600 * 1000);
    await w.reconcile();
    expect(w.appliedImage()).toBe("img:4.19.9");
    expect(w.writer.lastStatus<HcpClusterStatus>()?.desiredVersion).toBe("4.19.9");
    expect(condition(w.writer.lastStatus(), "MaintenanceDeferred")).toMatchObject({
      status: "False",
      reason: "NothingDeferred",
    });
    expect(w.events.events.find((e) => e.reason === "Upgrading")?.message).toBe(
      "Upgrading from 4.19.7 to 4.19.9: automatic patch upgrade",
    );
  });

  it("holds nothing the customer asks for, and says nothing of windows when nothing waits", async () => {
    const c = cluster({ id: "4.19.9", upgradePolicy: "AutomaticPatch" }, running);
    c.spec.maintenance = maintenance;
    const w = world(c, { catalog: catalogText(WITH_4_19_9) });
    await w.reconcile();
    expect(w.appliedImage()).toBe("img:4.19.9");
    expect(condition(w.writer.lastStatus(), "MaintenanceDeferred")).toBeUndefined();
  });

  it("keeps a freeze shut even inside a window", async () => {
    const c = cluster({ id: "4.19.7", upgradePolicy: "AutomaticPatch" }, running);
    c.spec.maintenance = {
      ...maintenance,
      freezes: [{ start: "2026-11-27T00:00:00Z", end: "2026-12-01T00:00:00Z", reason: "year-end sale" }],
    };
    const w = world(c, { catalog: catalogText(WITH_4_19_9) });
    w.tick(13.5 * 3600 * 1000);
    await w.reconcile();
    expect(w.appliedImage()).toBe("img:4.19.7");
    expect(condition(w.writer.lastStatus(), "MaintenanceDeferred")).toMatchObject({
      reason: "MaintenanceFrozen",
      message:
        "The automatic patch upgrade from 4.19.7 to 4.19.9 waits: maintenance frozen until 2026-12-01T00:00:00Z (year-end sale)",
    });
  });
});
