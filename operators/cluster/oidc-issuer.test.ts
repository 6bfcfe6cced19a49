/** The cluster reconciler's OIDC issuer: the signing key, the published documents, storage faults. */
import { describe, expect, it } from "vitest";
import type { HcpCluster, HcpClusterStatus } from "../api/v1alpha1/index.ts";
import { type ManifestWork } from "../api/work/v1.ts";
import { BlobStoreError } from "../azure/blob.ts";
import type { HostedCluster } from "../api/hypershift/v1beta1/index.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { publicJwk } from "./signing-keyring.ts";
import { RetryableStepError } from "./azure-step.ts";
import { cluster, condition, ISSUER_BASE, world } from "../../test/support/cluster-world.ts";

describe("ClusterReconciler", () => {
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
      const reads = () => w.blobs.calls.filter((x) => x.verb === "read").length;
      // The first publish writes both without reading: nothing can be there yet.
      expect([reads(), writes()]).toEqual([0, 2]);
      const published = condition(w.writer.lastStatus(), "OidcIssuerReady");
      // A new generation of a cluster whose status shows the documents published reads them
      // again: nothing changed, nothing written.
      w.clusters.set({
        ...w.clusters.get("default", "demo")!,
        status: w.writer.lastStatus<HcpClusterStatus>(),
        metadata: { ...cluster().metadata, generation: 2 },
      });
      await w.reconcile();
      expect([reads(), writes()]).toEqual([2, 2]);
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
});
