/**
 * HyperShift's customer-managed etcd keys on Azure, as seen from outside:
 *
 * - ValidAzureKMSConfig: the control-plane operator encrypts a probe with the active key
 *   (hostedcontrolplane_controller.go validateAzureKMSConfig): Unknown without an Azure KMS key,
 *   False with reason AzureError and its "failed to encrypt data using KMS (key: <name>/<version>)"
 *   message when Key Vault refuses. The simulator holds no vault; it refuses what Key Vault never
 *   holds: a vault name that is not a Key Vault host name, a key name Key Vault refuses, a version
 *   that is not the 32 hexadecimal digits Key Vault gives every key version.
 * - EtcdDataEncryptionUpToDate: HyperShift's re-encryption controller (openshift/hypershift#8219,
 *   newer than the v0.1.75 CRDs the tests serve) records the fingerprint of the key all data is
 *   encrypted with on the control plane's `kas-secret-encryption-config` Secret. The first key is
 *   taken as is; after a change of active key the data is re-encrypted (here: it takes the
 *   rollout delay) and the condition is True again. Data under a key that is neither the active
 *   nor the backup key cannot be read: ReEncryptionFailed.
 *
 * Everything is computed from the HostedCluster, the Secret's annotation and the clock, so a
 * restarted simulator continues a re-encryption where they say it was.
 */
import { createHash } from "node:crypto";
import {
  HostedClusterConditionType as T,
  HyperShiftReason as R,
  ALL_IS_WELL,
  type AzureKMSKey,
  type AzureKMSSpec,
  type HostedCluster,
} from "../../operators/api/hypershift/v1beta1/index.ts";
import { getCondition, type ConditionInput } from "../../operators/runtime/conditions.ts";

/** HyperShift's Secret of the control plane's encryption configuration, and its annotation. */
export const ENCRYPTION_CONFIG_SECRET = "kas-secret-encryption-config";
export const MIGRATED_KEY_HASH_ANNOTATION = "hypershift.openshift.io/encryption-migrated-key-hash";

export const COMPLETED_MESSAGE = "All etcd data has been re-encrypted with the active encryption key";

/** The Azure KMS spec of a HostedCluster that has one. */
export function azureKMS(hc: HostedCluster): AzureKMSSpec | undefined {
  const se = hc.spec.secretEncryption;
  return se?.type === "kms" && se.kms?.provider === "Azure" ? se.kms.azure : undefined;
}

/** HyperShift's fingerprint input of an Azure key (computeActiveKeyFingerprint). */
export function keyFingerprint(key: AzureKMSKey): string {
  return createHash("sha256")
    .update(`azure/${key.keyVaultName}/${key.keyName}/${key.keyVersion}`)
    .digest("hex");
}

/** What Key Vault answers an encrypt with `key`, when it refuses. */
function keyVaultRefusal(key: AzureKMSKey): string | undefined {
  const vault = key.keyVaultName;
  if (!/^[a-zA-Z][a-zA-Z0-9-]{1,22}[a-zA-Z0-9]$/.test(vault) || vault.includes("--"))
    return `dial tcp: lookup ${vault}.vault.azure.net: no such host`;
  const id = `${key.keyName}/${key.keyVersion}`;
  if (!/^[a-zA-Z0-9-]{1,127}$/.test(key.keyName) || !/^[0-9a-f]{32}$/i.test(key.keyVersion))
    return `ERROR CODE: KeyNotFound: A key with (name/id) ${id} was not found in this key vault`;
  return undefined;
}

/** ValidAzureKMSConfig of an Azure HostedCluster. */
export function validAzureKMSConfig(hc: HostedCluster): ConditionInput {
  const azure = azureKMS(hc);
  if (!azure)
    return {
      type: T.ValidAzureKMSConfig,
      status: "Unknown",
      reason: R.StatusUnknown,
      message: "Azure KMS is not configured",
    };
  const refusal = keyVaultRefusal(azure.activeKey);
  if (refusal)
    return {
      type: T.ValidAzureKMSConfig,
      status: "False",
      reason: R.AzureError,
      message: `failed to encrypt data using KMS (key: ${azure.activeKey.keyName}/${azure.activeKey.keyVersion}): ${refusal}`,
    };
  return { type: T.ValidAzureKMSConfig, status: "True", reason: R.AsExpected, message: ALL_IS_WELL };
}

export interface ReEncryption {
  /** EtcdDataEncryptionUpToDate; undefined without an Azure KMS key. */
  condition?: ConditionInput;
  /** The fingerprint to record on the Secret before the condition says so. */
  migratedKeyHash?: string;
  /** When the re-encryption under way completes. */
  dueInMs?: number;
}

/**
 * EtcdDataEncryptionUpToDate from the fingerprint of the key the data is encrypted with
 * (`migrated`, the Secret's annotation), the condition as it stands (when a re-encryption began)
 * and the clock.
 */
export function reEncryption(
  hc: HostedCluster,
  migrated: string | undefined,
  clock: { now: Date; provisionDelayMs: number },
): ReEncryption {
  const previous = getCondition(hc.status?.conditions, T.EtcdDataEncryptionUpToDate);
  const azure = azureKMS(hc);
  if (!azure) return {};
  const active = keyFingerprint(azure.activeKey);
  const type = T.EtcdDataEncryptionUpToDate;
  const done: ConditionInput = {
    type,
    status: "True",
    reason: R.ReEncryptionCompleted,
    message: COMPLETED_MESSAGE,
  };
  // The first key: there is nothing encrypted with another one to migrate.
  if (migrated === undefined) return { condition: done, migratedKeyHash: active };
  if (migrated === active) return { condition: done };
  if (!azure.backupKey || keyFingerprint(azure.backupKey) !== migrated)
    return {
      condition: {
        type,
        status: "False",
        reason: R.ReEncryptionFailed,
        message:
          "etcd data is encrypted with a key that is neither the active nor the backup key: the kube-apiserver cannot read it",
      },
    };
  // The key Key Vault refuses cannot encrypt anything: the re-encryption waits for a usable one.
  const inProgress = (message: string): ReEncryption => ({
    condition: { type, status: "False", reason: R.ReEncryptionInProgress, message },
  });
  if (keyVaultRefusal(azure.activeKey))
    return inProgress("Waiting for the kube-apiserver to use the active key");
  const began =
    previous?.status === "False" && previous.reason === R.ReEncryptionInProgress
      ? Date.parse(previous.lastTransitionTime)
      : clock.now.getTime();
  const dueInMs = began + clock.provisionDelayMs - clock.now.getTime();
  if (dueInMs <= 0) return { condition: done, migratedKeyHash: active };
  return { ...inProgress("Re-encryption in progress for: secrets, configmaps"), dueInMs };
}
