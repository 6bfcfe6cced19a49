/**
 * The cluster reconciler's world on fakes, for its unit tests (operators/cluster/*.test.ts):
 * listers instead of informers, a scripted infrastructure, a recording writer and event recorder,
 * in-memory issuer storage and signing keys, a clock.
 */
import type {
  ExternalAuth,
  HcpCluster,
  HcpClusterStatus,
  ManagementCluster,
  NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import { CLUSTER_FINALIZER } from "../../operators/api/v1alpha1/index.ts";
import { WORK_LABELS } from "../../operators/api/v1alpha1/labels.ts";
import { summariseWorkSpec, type ManifestWork } from "../../operators/api/work/v1.ts";
import { BlobIssuerDocuments } from "../../operators/cluster/oidc.ts";
import { ClusterReconciler } from "../../operators/cluster/reconcile.ts";
import { CLUSTER_UID_INDEX, type ClusterReconcilerDeps } from "../../operators/cluster/scope.ts";
import { MANAGEMENT_CLUSTER_INDEX, byManagementCluster } from "../../operators/hcp/indexes.ts";
import { ReleaseCatalog } from "../../operators/releases/catalog.ts";
import {
  MemoryBlobStore,
  MemorySigningKeys,
  RecordingEvents,
  RecordingWriter,
  ScriptedInfra,
  testContext,
  type InfraStep,
} from "./fakes.ts";
import { FakeLister } from "./lister.ts";
import { sampleCluster, sampleManagementCluster, sampleRegion } from "./samples.ts";

export const RECHECK_MS = 60_000;
export const ISSUER_BASE = "https://oidc.example.com/";

export const catalog = new ReleaseCatalog([
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

export function cluster(
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

export function managementCluster(name: string, capacity = 50): ManagementCluster {
  const mc = sampleManagementCluster("mgmt-1");
  return {
    ...mc,
    metadata: { name },
    spec: { ...mc.spec, consumerName: name, capacity: { maxHostedClusters: capacity } },
  };
}

export function world(
  opts: {
    clusters?: HcpCluster[];
    mcs?: ManagementCluster[];
    pools?: NodePool[];
    works?: ManifestWork[];
    budget?: { perSecond: number; burst: number };
    workTemplateRevision?: () => number;
    softDelete?: ClusterReconcilerDeps["softDelete"];
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
    [CLUSTER_UID_INDEX]: (w) => [w.metadata.labels?.[WORK_LABELS.clusterUid] ?? ""],
  });
  const blobs = new MemoryBlobStore();
  const keys = new MemorySigningKeys();
  const pools = new FakeLister(opts.pools ?? []);
  const reconciler = new ClusterReconciler(
    {
      clusters,
      nodePools: pools,
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
      ...(opts.workTemplateRevision && { workTemplateRevision: opts.workTemplateRevision }),
      ...(opts.softDelete && { softDelete: opts.softDelete }),
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
    pools,
    blobs,
    keys,
    reconciler,
    reconcile,
    observeStatus,
    tick,
  };
}

export const condition = (status: HcpClusterStatus | undefined, type: string) =>
  status?.conditions?.find((c) => c.type === type);

export const AZURE_STEPS: Array<[InfraStep, string]> = [
  ["ensureResourceGroup", "ResourceGroupReady"],
  ["ensureDnsZone", "DnsZoneReady"],
  ["ensureDelegation", "DnsDelegated"],
  ["ensureIngress", "IngressReady"],
];
