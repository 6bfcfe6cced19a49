/**
 * Customer-managed etcd encryption end to end, read on the management cluster: a cluster created
 * through the ARM frontend and one created with `kubectl apply` carry the customer's Azure Key
 * Vault key as the HostedCluster's spec.secretEncryption; a new key version rotates (the old one
 * stays the backup key until the simulated HyperShift has re-encrypted the data, then goes); a key
 * HyperShift cannot use fails the ARM operation naming it, and the next version replaces it.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AzureKMSKey,
  type AzureKMSSpec,
  type HostedCluster,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { clusterCRName, subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import { clientFor, eventually } from "../support/fixtures.ts";
import { clusterBody, clusterPath, withCustomerKey, type ArmClient } from "../support/frontend.ts";
import { sampleCluster } from "../support/samples.ts";
import {
  hostedClusterOf,
  kubectlApply,
  LIFECYCLE_MS,
  startSettingsE2e,
  type SettingsE2e,
} from "../support/settings-e2e.ts";

const service = clientFor("service");
const sub = randomUUID();
const armNamespace = subscriptionNamespace(sub);
const customer = `kms-${process.pid}`;
const rg = "E2E-Kms";
const armPrefix = `km${process.pid % 100000}`;
const kubectlPrefix = `kk${process.pid % 100000}`;
/** Key Vault's key versions: 32 hexadecimal digits. */
const V1 = "0123456789abcdef0123456789abcdef";
const V2 = "1123456789abcdef0123456789abcdef";
const V3 = "2123456789abcdef0123456789abcdef";
const VAULT = "kv-e2e";

let e2e: SettingsE2e | undefined;
let arm: ArmClient;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

const key = (keyVersion: string): AzureKMSKey => ({ keyVaultName: VAULT, keyName: "etcd", keyVersion });

const kmsOf = (hc: HostedCluster | undefined): AzureKMSSpec | undefined =>
  hc?.spec.secretEncryption?.kms?.azure;
const keysOf = (hc: HostedCluster | undefined) => ({
  active: kmsOf(hc)?.activeKey?.keyVersion,
  backup: kmsOf(hc)?.backupKey?.keyVersion,
});
const condition = (o: { status?: { conditions?: Array<{ type: string }> } } | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type) as
    { status: string; reason: string; message: string } | undefined;

/**
 * Waits for the cluster's provisioning state to be terminal again: dropping a backup key changes
 * the HostedCluster (HyperShift rolls its kube-apiserver out again), and ARM takes no update
 * meanwhile (409).
 */
async function settled(): Promise<void> {
  await eventually(
    "the cluster's provisioning state terminal",
    async () => {
      const got = (await arm.send("GET", clusterPath(sub, rg, "Kms"))).body as Json;
      return ["Succeeded", "Failed"].includes(String(got.properties.provisioningState));
    },
    LIFECYCLE_MS,
  );
}

/** PATCHes the cluster's key version through ARM and waits for the operation to end. */
async function rotateTo(version: string): Promise<Json> {
  await settled();
  const r = await arm.send("PATCH", clusterPath(sub, rg, "Kms"), {
    body: {
      properties: { etcd: { dataEncryption: { customerManaged: { kms: { activeKey: { version } } } } } },
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250);
}

beforeAll(async () => {
  // Re-encryption takes a rollout's delay: long enough to see the backup key on the HostedCluster.
  e2e = await startSettingsE2e({
    name: "kms",
    sub,
    customer,
    simulator: { provisionDelayMs: 1_500, deleteDelayMs: 300 },
  });
  arm = e2e.arm;
}, 120_000);

afterAll(async () => {
  await e2e?.stop();
});

describe("customer-managed etcd encryption reaches the HostedCluster", () => {
  const path = clusterPath(sub, rg, "Kms");
  const kms = { vaultName: VAULT, visibility: "Private", activeKey: { name: "etcd", version: V1 } };
  let hostedCluster: () => Promise<HostedCluster | undefined>;
  const hcp = () => service.get<HcpCluster>(HcpClusterResource, clusterCRName(rg, "Kms"), armNamespace);

  it("a cluster created through ARM: the HostedCluster encrypts etcd with the customer's key", async () => {
    const r = await arm.send("PUT", path, {
      body: withCustomerKey(clusterBody(sub, { prefix: armPrefix }), sub, kms),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const op = await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250);
    expect(op, JSON.stringify(op)).toMatchObject({ status: "Succeeded" });

    const { read } = await hostedClusterOf(clusterCRName(rg, "Kms"), armNamespace);
    hostedCluster = read;
    const hc = await read();
    expect(hc?.spec.secretEncryption).toEqual({
      type: "kms",
      kms: {
        provider: "Azure",
        azure: {
          activeKey: key(V1),
          kms: { credentialsSecretName: `${armPrefix}-kms`, objectEncoding: "utf-8" },
          keyVaultAccess: "Private",
        },
      },
    });
    expect(condition(hc, "ValidAzureKMSConfig")).toMatchObject({ status: "True" });
    await eventually(
      "the HcpCluster saying etcd is encrypted with the key",
      async () => condition(await hcp(), "EtcdDataEncryptionUpToDate")?.status === "True",
      LIFECYCLE_MS,
    );
    expect(condition(await hcp(), "EtcdDataEncryptionUpToDate")?.message).toBe(
      `All etcd data is encrypted with ${VAULT}/etcd version ${V1}`,
    );
    const got = (await arm.send("GET", path)).body as Json;
    expect(got.properties.etcd).toEqual({
      dataEncryption: {
        keyManagementMode: "CustomerManaged",
        customerManaged: { encryptionType: "KMS", kms },
      },
    });
  });

  it("a cluster created with kubectl apply: the HostedCluster carries the key", async () => {
    const c = sampleCluster();
    c.metadata = { name: "kms", namespace: customer };
    c.spec.dns.baseDomainPrefix = kubectlPrefix;
    delete c.spec.placement;
    c.spec.platform.azure.identities.controlPlaneOperators.kms =
      c.spec.platform.azure.identities.serviceManagedIdentity.replace(/\/[^/]+$/, "/kms");
    c.spec.etcd = {
      dataEncryption: {
        keyManagementMode: "CustomerManaged",
        customerManaged: { kms: { vaultName: VAULT, activeKey: { name: "etcd", version: V1 } } },
      },
    };
    await kubectlApply(e2e!.scratch.path, c);
    const { read } = await hostedClusterOf("kms", customer);
    expect(kmsOf(await read())).toMatchObject({ activeKey: key(V1), keyVaultAccess: "Public" });
    expect(kmsOf(await read())?.backupKey).toBeUndefined();
  });

  it("a new key version rotates: the old one stays the backup key until the data is re-encrypted", async () => {
    // HyperShift keeps reading what the old version encrypted while it re-encrypts: watched from
    // before the PATCH, as the operation may end after the re-encryption.
    const backupSeen = eventually(
      "version 2 active, version 1 the backup",
      async () =>
        JSON.stringify(keysOf(await hostedCluster())) === JSON.stringify({ active: V2, backup: V1 }),
      LIFECYCLE_MS,
    );
    const op = await rotateTo(V2);
    expect(op, JSON.stringify(op)).toMatchObject({ status: "Succeeded" });
    await backupSeen;
    // Re-encrypted: the backup key goes.
    await eventually(
      "the backup key gone",
      async () => JSON.stringify(keysOf(await hostedCluster())) === JSON.stringify({ active: V2 }),
      LIFECYCLE_MS,
    );
    expect(condition(await hostedCluster(), "EtcdDataEncryptionUpToDate")).toMatchObject({
      status: "True",
      reason: "ReEncryptionCompleted",
    });
    await eventually(
      "the HcpCluster naming version 2",
      async () => condition(await hcp(), "EtcdDataEncryptionUpToDate")?.message?.endsWith(V2) === true,
      LIFECYCLE_MS,
    );
    const got = (await arm.send("GET", path)).body as Json;
    expect(got.properties.etcd.dataEncryption.customerManaged.kms.activeKey).toEqual({
      name: "etcd",
      version: V2,
    });
  });

  it("a key HyperShift cannot use fails the operation naming it; the next version replaces it", async () => {
    const failed = await rotateTo("v3");
    expect(failed, JSON.stringify(failed)).toMatchObject({
      status: "Failed",
      error: { code: "HostedClusterAzureError" },
    });
    expect((failed.error as Json).message).toContain(
      `The etcd encryption key ${VAULT}/etcd version v3 cannot be used: failed to encrypt data using KMS (key: etcd/v3)`,
    );
    expect(keysOf(await hostedCluster())).toEqual({ active: "v3", backup: V2 });
    expect(condition(await hcp(), "Degraded")).toMatchObject({
      status: "True",
      reason: "HostedClusterAzureError",
    });

    // Nothing was encrypted with the refused version: the next one takes its place, version 2 stays the backup.
    const replaced = eventually(
      "version 3 active, version 2 still the backup",
      async () =>
        JSON.stringify(keysOf(await hostedCluster())) === JSON.stringify({ active: V3, backup: V2 }),
      LIFECYCLE_MS,
    );
    const fixed = await rotateTo(V3);
    expect(fixed, JSON.stringify(fixed)).toMatchObject({ status: "Succeeded" });
    await replaced;
    await eventually(
      "re-encrypted with version 3, no backup",
      async () => JSON.stringify(keysOf(await hostedCluster())) === JSON.stringify({ active: V3 }),
      LIFECYCLE_MS,
    );
    expect(condition(await hcp(), "Degraded")?.status).toBe("False");
  });

  it("the vault, its visibility and the key's name are fixed at creation, refused naming them", async () => {
    await settled();
    for (const [kmsPatch, target] of [
      [{ vaultName: "kv-other" }, "properties.etcd.dataEncryption.customerManaged.kms.vaultName"],
      [{ visibility: "Public" }, "properties.etcd.dataEncryption.customerManaged.kms.visibility"],
      [{ activeKey: { name: "other" } }, "properties.etcd.dataEncryption.customerManaged.kms.activeKey.name"],
    ] as const) {
      const r = await arm.send("PATCH", path, {
        body: { properties: { etcd: { dataEncryption: { customerManaged: { kms: kmsPatch } } } } },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(JSON.stringify(r.body)).toContain(target);
    }
  });
});
