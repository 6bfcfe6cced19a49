/**
 * The processes read their kubeconfig without client-node (operators/runtime/kubeconfig.ts): a
 * real kube-apiserver must take the credentials each shape gives and the client must verify the
 * server against the kubeconfig's CA.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NamespaceResource } from "../../operators/api/core.ts";
import { KubeClient, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
import { loadClusterAccess } from "../../operators/runtime/kubeconfig.ts";
import { ensureNamespaceExists, kubectl } from "../support/rbac.ts";
import { clusterInfo } from "../support/region.ts";

const selfSubjectReviews: ResourceType = {
  group: "authentication.k8s.io",
  version: "v1",
  kind: "SelfSubjectReview",
  plural: "selfsubjectreviews",
  namespaced: false,
};

interface Review extends KubeObject {
  status?: { userInfo?: { username?: string } };
}

const whoAmI = async (client: KubeClient): Promise<string | undefined> =>
  (await client.create<Review>(selfSubjectReviews, { metadata: {} })).status?.userInfo?.username;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kubeconfig-it-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("kubeconfigs read without client-node, against a real apiserver", () => {
  it("a harness kubeconfig: client certificate and CA inline", async () => {
    const client = new KubeClient(
      "service",
      loadClusterAccess({ path: clusterInfo("service").kubeconfigPath }),
    );
    const list = await client.list(NamespaceResource);
    expect(list.items.map((n) => n.metadata.name)).toContain("default");
  });

  it("a ServiceAccount's token file and a CA file, both relative to the kubeconfig", async () => {
    const namespace = "kubeconfig-test";
    await ensureNamespaceExists("service", namespace);
    await kubectl("service", "create", "serviceaccount", "reader", "-n", namespace).catch(() => undefined);
    const { stdout: token } = await kubectl("service", "create", "token", "reader", "-n", namespace);
    const admin = JSON.parse(await readFile(clusterInfo("service").kubeconfigPath, "utf8")) as {
      clusters: Array<{ cluster: { server: string; "certificate-authority-data": string } }>;
    };
    const cluster = admin.clusters[0]!.cluster;
    await writeFile(join(dir, "token"), token.trim());
    await writeFile(join(dir, "ca.crt"), Buffer.from(cluster["certificate-authority-data"], "base64"));
    const config = {
      "current-context": "sa",
      contexts: [{ name: "sa", context: { cluster: "service", user: "reader" } }],
      clusters: [{ name: "service", cluster: { server: cluster.server, "certificate-authority": "ca.crt" } }],
      users: [{ name: "reader", user: { tokenFile: "token" } }],
    };
    await writeFile(join(dir, "sa.kubeconfig"), JSON.stringify(config));
    const client = new KubeClient("service", loadClusterAccess({ path: join(dir, "sa.kubeconfig") }));
    expect(await whoAmI(client)).toBe(`system:serviceaccount:${namespace}:reader`);
  });

  it("refuses a server its CA did not sign", async () => {
    const other = JSON.parse(await readFile(clusterInfo("mgmt-1").kubeconfigPath, "utf8")) as {
      clusters: Array<{ cluster: { "certificate-authority-data": string } }>;
    };
    const service = JSON.parse(await readFile(clusterInfo("service").kubeconfigPath, "utf8")) as {
      clusters: Array<{ cluster: Record<string, string> }>;
    };
    service.clusters[0]!.cluster["certificate-authority-data"] =
      other.clusters[0]!.cluster["certificate-authority-data"]!;
    const client = new KubeClient("service", loadClusterAccess({ yaml: JSON.stringify(service) }));
    const err: unknown = await client.list(NamespaceResource).catch((e: unknown) => e);
    const cause = (err as { cause?: { code?: string } }).cause;
    expect(cause?.code).toMatch(/CERT|SIGNATURE|ISSUER/);
  });
});
