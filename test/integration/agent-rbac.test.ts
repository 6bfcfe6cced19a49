/**
 * maestro-agent runs with only the RBAC of config/bases/agent/rbac: a ServiceAccount token bound to that
 * ClusterRole applies a work of allowed kinds (namespace, ConfigMap, Swift's PodNetwork and
 * PodNetworkInstance, HyperShift objects), records
 * it, and cleans it up; a kind outside the allow-list is refused with a condition; a HostedCluster's
 * status change reaches the work through the agent's watch (its status sync period is set far
 * beyond the test, so only the watch can bring it). The maestro-server across the broker runs with
 * only the operators' RBAC of config/bases/operators/rbac.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ACN_API_VERSION,
  PodNetworkInstanceResource,
  PodNetworkResource,
} from "../../operators/api/acn/v1alpha1.ts";
import { HostedClusterResource } from "../../operators/api/hypershift/v1beta1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import { asManifest } from "../../operators/hcp/work.ts";
import { MaestroAgent } from "../../operators/maestro-agent/controller.ts";
import { MaestroServer } from "../../operators/maestro-server/controller.ts";
import { ClusterRegistry } from "../../operators/runtime/clusters.ts";
import { KubeClient } from "../../operators/runtime/kube.ts";
import { clientFor, configMapType, eventually, namespaceType } from "../support/fixtures.ts";
import { hostedClusterFixture } from "../support/hypershift.ts";
import { ensureNamespaceExists, kubectl, serviceAccountKubeConfig } from "../support/rbac.ts";
import { brokerCredentials, region } from "../support/region.ts";

const consumer = "mgmt-2";
const service = clientFor("service");
const admin = clientFor(consumer);
const target = `rbac-${process.pid}-${Date.now().toString(36)}`;
const registry = new ClusterRegistry();
const stop = new AbortController();

async function creds(identity: string) {
  const c = await brokerCredentials(identity);
  return { url: region().broker.url, caFile: c.caPath, certFile: c.certPath, keyFile: c.keyPath };
}

const SWIFT_SUBNET =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/integration";

const condition = (w: ManifestWork | undefined, type: string) =>
  w?.status?.conditions?.find((c) => c.type === type);

beforeAll(async () => {
  await kubectl(consumer, "apply", "--server-side", "-k", "config/bases/agent/rbac");
  await ensureNamespaceExists("service", "hcp-system");
  await kubectl(
    "service",
    "apply",
    "--server-side",
    "--force-conflicts",
    "-k",
    "config/bases/operators/rbac",
  );
  const agentKube = new KubeClient(
    consumer,
    await serviceAccountKubeConfig(consumer, "maestro-agent", "maestro-agent"),
  );
  // The token is really restricted: it cannot read what the ClusterRole does not name.
  await expect(
    agentKube.list({
      group: "rbac.authorization.k8s.io",
      version: "v1",
      kind: "ClusterRole",
      plural: "clusterroles",
      namespaced: false,
    }),
  ).rejects.toMatchObject({ code: 403 });
  const server = new MaestroServer({
    cluster: registry.add(
      "service",
      await serviceAccountKubeConfig("service", "hcp-system", "hcp-operators"),
    ),
    broker: {
      ...(await creds("maestro")),
      clientId: `maestro-rbac-${process.pid}`,
      backoff: { initialMs: 100, maxMs: 1000 },
    },
  });
  const agent = new MaestroAgent({
    consumer,
    kube: agentKube,
    broker: await creds(consumer),
    // Far beyond any wait here: status that arrives came from an apply or a watch event.
    statusSyncMs: 3_600_000,
  });
  void server.start(stop.signal);
  void agent.start(stop.signal);
  await eventually("connected", () => server.connection.isConnected() && agent.connection.isConnected());
  await service.create(namespaceType, { metadata: { name: consumer } }).catch(() => undefined);
}, 60_000);

afterAll(async () => {
  stop.abort();
  registry.stopAll();
  await admin.delete(namespaceType, { name: target });
});

describe("maestro-agent with its own RBAC only", () => {
  it("applies, reports and deletes a work of allowed kinds", async () => {
    const name = `rbac-${Date.now().toString(36)}`;
    await service.create<ManifestWork>(ManifestWorkResource, {
      apiVersion: "work.open-cluster-management.io/v1",
      kind: "ManifestWork",
      metadata: { name, namespace: consumer },
      spec: {
        workload: {
          manifests: [
            { apiVersion: "v1", kind: "Namespace", metadata: { name: target } },
            {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name: "cm", namespace: target },
              data: { a: "1" },
            },
            // A VNet integration subnet's Swift objects: one cluster-scoped, one namespaced.
            {
              apiVersion: ACN_API_VERSION,
              kind: "PodNetwork",
              metadata: { name: target },
              spec: { subnetResourceID: SWIFT_SUBNET },
            },
            {
              apiVersion: ACN_API_VERSION,
              kind: "PodNetworkInstance",
              metadata: { name: "pni", namespace: target },
              spec: { podNetworkConfigs: [{ podNetwork: target }] },
            },
          ],
        },
      },
    });
    await eventually(
      "Applied under the restricted token",
      async () =>
        condition(await service.find<ManifestWork>(ManifestWorkResource, name, consumer), "Applied")
          ?.status === "True",
      30_000,
    );
    expect(await admin.find(configMapType, "cm", target)).toBeDefined();
    expect(await admin.find(PodNetworkResource, target)).toMatchObject({
      spec: { subnetResourceID: SWIFT_SUBNET },
    });
    expect(await admin.find(PodNetworkInstanceResource, "pni", target)).toBeDefined();
    await service.delete(ManifestWorkResource, { name, namespace: consumer });
    await eventually(
      "deleted and confirmed",
      async () => (await service.find(ManifestWorkResource, name, consumer)) === undefined,
      60_000,
    );
    expect(await admin.find(configMapType, "cm", target)).toBeUndefined();
    expect(await admin.find(PodNetworkResource, target)).toBeUndefined();
  });

  it("brings a HostedCluster's status change back through its watch, with no status poll", async () => {
    const name = `rbac-watch-${Date.now().toString(36)}`;
    const hcNamespace = `${target}-hc`;
    await service.create<ManifestWork>(ManifestWorkResource, {
      apiVersion: "work.open-cluster-management.io/v1",
      kind: "ManifestWork",
      metadata: { name, namespace: consumer },
      spec: {
        workload: {
          manifests: [
            { apiVersion: "v1", kind: "Namespace", metadata: { name: hcNamespace } },
            asManifest(hostedClusterFixture(hcNamespace, "hc")),
          ],
        },
        manifestConfigs: [
          {
            resourceIdentifier: {
              group: "hypershift.openshift.io",
              resource: "hostedclusters",
              name: "hc",
              namespace: hcNamespace,
            },
            feedbackRules: [
              { type: "JSONPaths", jsonPaths: [{ name: "host", path: ".status.controlPlaneEndpoint.host" }] },
            ],
          },
        ],
      },
    });
    const feedback = async () => {
      const w = await service.find<ManifestWork>(ManifestWorkResource, name, consumer);
      const entry = w?.status?.resourceStatus?.manifests?.find(
        (m) => m.resourceMeta.kind === "HostedCluster",
      );
      const value = entry?.statusFeedback?.values?.find((v) => v.name === "host")?.fieldValue;
      return value?.type === "String" ? value.string : undefined;
    };
    await eventually(
      "applied",
      async () =>
        condition(await service.find<ManifestWork>(ManifestWorkResource, name, consumer), "Applied")
          ?.status === "True",
      30_000,
    );
    expect(await feedback()).toBeUndefined();
    // HyperShift reports: the status subresource changes on the management cluster.
    await admin.mergePatch(
      HostedClusterResource,
      { name: "hc", namespace: hcNamespace },
      { status: { controlPlaneEndpoint: { host: "api.watched.example.com", port: 443 } } },
      { subresource: "status" },
    );
    await eventually(
      "feedback from the watch",
      async () => (await feedback()) === "api.watched.example.com",
      30_000,
    );
    await service.delete(ManifestWorkResource, { name, namespace: consumer });
    await eventually(
      "deleted and confirmed",
      async () => (await service.find(ManifestWorkResource, name, consumer)) === undefined,
      60_000,
    );
  });

  it("refuses a kind outside the allow-list with a condition", async () => {
    const name = `rbac-denied-${Date.now().toString(36)}`;
    await service.create<ManifestWork>(ManifestWorkResource, {
      apiVersion: "work.open-cluster-management.io/v1",
      kind: "ManifestWork",
      metadata: { name, namespace: consumer },
      spec: {
        workload: {
          manifests: [
            {
              apiVersion: "rbac.authorization.k8s.io/v1",
              kind: "ClusterRole",
              metadata: { name: `escalate-${process.pid}` },
              rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
            },
          ],
        },
      },
    });
    await eventually(
      "refused",
      async () => {
        const w = await service.find<ManifestWork>(ManifestWorkResource, name, consumer);
        return JSON.stringify(w?.status ?? {}).includes("ManifestKindNotAllowed");
      },
      30_000,
    );
    await service.delete(ManifestWorkResource, { name, namespace: consumer });
    await eventually(
      "deleted",
      async () => (await service.find(ManifestWorkResource, name, consumer)) === undefined,
      60_000,
    );
  });
});
