import { describe, expect, it } from "vitest";
import { ORIGINAL_UID_ANNOTATION, type HcpCluster } from "../api/v1alpha1/index.ts";
import { clusterNames } from "../api/v1alpha1/clusternames.ts";
import type { Release } from "../releases/catalog.ts";
import { sampleCluster, sampleRegion } from "../../test/support/samples.ts";
import { SIGNING_KEY_ID_ANNOTATION } from "../api/v1alpha1/feedback.ts";
import {
  allowedCIDRBlocks,
  hostedAutoscaling,
  hostedClusterManifest,
  hostedClusterWork,
  SIGNING_KEY_SECRET_NAME,
} from "./hostedcluster.ts";
import { issuerPath, newSigningKey } from "./oidc.ts";
import { keyId } from "./signing-keyring.ts";

const release: Release = {
  version: "4.19.7",
  image: "quay.io/openshift-release-dev/ocp-release:4.19.7-multi",
  channelGroups: ["stable"],
};

function hostedCluster(mutate: (c: HcpCluster) => void = () => undefined) {
  const c = sampleCluster();
  c.metadata.namespace = "customer";
  c.metadata.uid = "0b0e5c6e-4f7d-4e43-9d7a-000000000001";
  mutate(c);
  const region = sampleRegion();
  return hostedClusterManifest(c, clusterNames(c, region), release, {
    region,
    issuerURL: "https://oidc.example.com/t/c",
  });
}

describe("the HostedCluster carries the user's settings", () => {
  it("authorized CIDRs become the API server's allowedCIDRBlocks, bare addresses as one host", () => {
    const hc = hostedCluster((c) => {
      c.spec.api = { authorizedCIDRs: ["10.0.0.0/8", "203.0.113.7", "2001:db8::1", "203.0.113.7/32"] };
    });
    expect(hc.spec.networking.apiServer).toEqual({
      allowedCIDRBlocks: ["10.0.0.0/8", "203.0.113.7/32", "2001:db8::1/128"],
    });
  });

  it("without authorized CIDRs (unset or empty) the API server takes any address", () => {
    expect(hostedCluster().spec.networking.apiServer).toBeUndefined();
    expect(
      hostedCluster((c) => (c.spec.api = { authorizedCIDRs: [] })).spec.networking.apiServer,
    ).toBeUndefined();
    expect(allowedCIDRBlocks(undefined)).toBeUndefined();
  });

  it("FIPS becomes spec.fips; without it the field is left out", () => {
    expect(hostedCluster((c) => (c.spec.fips = true)).spec.fips).toBe(true);
    expect(hostedCluster((c) => (c.spec.fips = false)).spec.fips).toBeUndefined();
    expect(hostedCluster().spec.fips).toBeUndefined();
  });

  it("a disabled image registry becomes the ImageRegistry capability disabled", () => {
    const disabled = hostedCluster((c) => (c.spec.clusterImageRegistry = { state: "Disabled" }));
    expect(disabled.spec.capabilities).toEqual({ disabled: ["ImageRegistry"] });
    const enabled = hostedCluster((c) => (c.spec.clusterImageRegistry = { state: "Enabled" }));
    expect(enabled.spec.capabilities).toBeUndefined();
    expect(hostedCluster().spec.capabilities).toBeUndefined();
  });

  it("image digest mirrors become imageContentSources, in order", () => {
    const mirrors = [
      { source: "quay.io/openshift-release-dev/ocp-release", mirrors: ["mirror.example.com/ocp/release"] },
      { source: "registry.redhat.io", mirrors: ["a.example.com/rh", "b.example.com/rh"] },
    ];
    expect(hostedCluster((c) => (c.spec.imageDigestMirrors = mirrors)).spec.imageContentSources).toEqual(
      mirrors,
    );
    expect(hostedCluster((c) => (c.spec.imageDigestMirrors = [])).spec.imageContentSources).toBeUndefined();
    expect(hostedCluster().spec.imageContentSources).toBeUndefined();
  });

  it("autoscaling becomes HyperShift's, the provision time a Go duration; unset fields left out", () => {
    expect(
      hostedCluster(
        (c) =>
          (c.spec.autoscaling = {
            maxNodesTotal: 50,
            maxPodGracePeriodSeconds: 300,
            maxNodeProvisionTimeSeconds: 900,
            podPriorityThreshold: -5,
          }),
      ).spec.autoscaling,
    ).toEqual({
      maxNodesTotal: 50,
      maxPodGracePeriod: 300,
      maxNodeProvisionTime: "900s",
      podPriorityThreshold: -5,
    });
    expect(hostedAutoscaling({ maxNodeProvisionTimeSeconds: 0, podPriorityThreshold: 0 })).toEqual({
      maxNodeProvisionTime: "0s",
      podPriorityThreshold: 0,
    });
    expect(hostedCluster((c) => (c.spec.autoscaling = {})).spec.autoscaling).toBeUndefined();
    expect(hostedCluster().spec.autoscaling).toBeUndefined();
  });
});

describe("customer-managed etcd keys become HyperShift's spec.secretEncryption", () => {
  const customerKey = (c: HcpCluster, visibility?: "Public" | "Private") => {
    c.spec.etcd = {
      dataEncryption: {
        keyManagementMode: "CustomerManaged",
        customerManaged: {
          encryptionType: "KMS",
          kms: {
            vaultName: "kv-demo",
            ...(visibility ? { visibility } : {}),
            activeKey: { name: "etcd", version: "v1" },
          },
        },
      },
    };
  };

  it("type kms, provider Azure, the spec's key active, the kms identity's credentials, the vault's access", () => {
    const hc = hostedCluster((c) => customerKey(c, "Private"));
    expect(hc.spec.secretEncryption).toEqual({
      type: "kms",
      kms: {
        provider: "Azure",
        azure: {
          activeKey: { keyVaultName: "kv-demo", keyName: "etcd", keyVersion: "v1" },
          kms: { credentialsSecretName: `${hc.metadata.name}-kms`, objectEncoding: "utf-8" },
          keyVaultAccess: "Private",
        },
      },
    });
    expect(hostedCluster((c) => customerKey(c)).spec.secretEncryption?.kms?.azure?.keyVaultAccess).toBe(
      "Public",
    );
  });

  it("a rotation's keys as planned: the new version active, the old one the backup", () => {
    const c = sampleCluster();
    c.metadata.uid = "0b0e5c6e-4f7d-4e43-9d7a-000000000001";
    customerKey(c);
    const region = sampleRegion();
    const active = { keyVaultName: "kv-demo", keyName: "etcd", keyVersion: "v2" };
    const backup = { keyVaultName: "kv-demo", keyName: "etcd", keyVersion: "v1" };
    const hc = hostedClusterManifest(c, clusterNames(c, region), release, {
      region,
      issuerURL: "https://oidc.example.com/t/c",
      etcdKeys: { active, backup },
    });
    expect(hc.spec.secretEncryption?.kms?.azure).toMatchObject({ activeKey: active, backupKey: backup });
  });

  it("platform-managed keys (or none chosen) leave secretEncryption out", () => {
    expect(hostedCluster().spec.secretEncryption).toBeUndefined();
    expect(
      hostedCluster((c) => (c.spec.etcd = { dataEncryption: { keyManagementMode: "PlatformManaged" } })).spec
        .secretEncryption,
    ).toBeUndefined();
  });
});

describe("the service-account signing key's Secret in the work", () => {
  async function work() {
    const c = sampleCluster();
    c.metadata.namespace = "customer";
    c.metadata.uid = "0b0e5c6e-4f7d-4e43-9d7a-000000000001";
    const region = sampleRegion();
    const names = clusterNames(c, region);
    const signingKey = await newSigningKey();
    const w = hostedClusterWork({
      cluster: c,
      names,
      release,
      region,
      consumer: "mgmt-1",
      oidc: { issuerURL: "https://oidc.example.com/t/c", signingKey },
    });
    return {
      names,
      signingKey,
      manifests: w.spec?.workload?.manifests ?? [],
      configs: w.spec?.manifestConfigs ?? [],
    };
  }

  it("names its key ID in an annotation, and the work asks for that annotation back, not the key", async () => {
    const { names, signingKey, manifests, configs } = await work();
    const secret = manifests.find((m) => m.kind === "Secret" && m.metadata?.name === SIGNING_KEY_SECRET_NAME);
    expect(secret?.metadata?.["annotations"]).toEqual({ [SIGNING_KEY_ID_ANNOTATION]: keyId(signingKey) });
    const config = configs.find((m) => m.resourceIdentifier.resource === "secrets");
    expect(config?.resourceIdentifier).toEqual({
      group: "",
      resource: "secrets",
      name: SIGNING_KEY_SECRET_NAME,
      namespace: names.hostedClusterNamespace,
    });
    const paths = (config?.feedbackRules ?? []).flatMap((r) => r.jsonPaths ?? []).map((p) => p.path);
    expect(paths).toEqual([`.metadata.annotations['${SIGNING_KEY_ID_ANNOTATION}']`]);
    // The HostedCluster's own rule is still the first, as before.
    expect(configs[0]?.resourceIdentifier.resource).toBe("hostedclusters");
  });
});

describe("a restored cluster keeps its names", () => {
  it("takes its ID, namespaces, work and issuer path from the uid it was first created with", () => {
    const first = sampleCluster();
    first.metadata.uid = "0b0e5c6e-4f7d-4e43-9d7a-000000000001";
    const restored = sampleCluster();
    restored.metadata.uid = "7d1c2b3a-0000-4000-8000-00000000000f";
    restored.metadata.annotations = { [ORIGINAL_UID_ANNOTATION]: first.metadata.uid };
    const region = sampleRegion();
    expect(clusterNames(restored, region)).toEqual(clusterNames(first, region));
    expect(clusterNames(restored, region).hostedClusterNamespace).toContain(first.metadata.uid);
    expect(issuerPath(restored)).toBe(issuerPath(first));
  });
});
