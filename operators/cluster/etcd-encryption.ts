/**
 * Customer-managed etcd keys on the HostedCluster (spec.secretEncryption, type kms, provider
 * Azure), and their rotation. A new key version becomes the active key and the one before it stays
 * the backup key, so the data it encrypted stays readable, until HyperShift reports all data
 * re-encrypted with the new one (EtcdDataEncryptionUpToDate True for the HostedCluster carrying
 * exactly those keys); then the backup key goes. HyperShift holds one backup key, so a further
 * version waits for that report before it rotates in.
 *
 * What the HostedCluster carries is recorded on the cluster's ManifestWork (the same write that
 * sends it), and each decision is made from that record and the HostedCluster's feedback on the
 * same work: never from memory, so a restart continues the rotation where the work says it is.
 */
import type { AzureKMSKey, SecretEncryptionSpec } from "../api/hypershift/v1beta1.ts";
import type { HcpCluster, KmsEncryptionSpec } from "../api/v1alpha1/index.ts";
import type { HostedClusterReport } from "../hcp/feedback.ts";
import type { KubeObject } from "../runtime/kube.ts";
import type { ConditionInput } from "../runtime/conditions.ts";

/** On a cluster's work: the keys (JSON EtcdKeys) its HostedCluster's secretEncryption carries. */
export const ETCD_KEYS_ANNOTATION = "hcp.aro.dev/etcd-encryption-keys";

/** The HcpCluster condition that says which key encrypts etcd data and how a rotation stands. */
export const ETCD_ENCRYPTION_CONDITION = "EtcdDataEncryptionUpToDate";

/** The keys a HostedCluster carries: the active one, and the previous one during a rotation. */
export interface EtcdKeys {
  active: AzureKMSKey;
  backup?: AzureKMSKey;
}

/** The customer's key as the spec wants it, or undefined when the platform's keys encrypt etcd. */
export function wantedKey(cluster: HcpCluster): { key: AzureKMSKey; kms: KmsEncryptionSpec } | undefined {
  const encryption = cluster.spec.etcd?.dataEncryption;
  const kms =
    encryption?.keyManagementMode === "CustomerManaged" ? encryption.customerManaged?.kms : undefined;
  if (!kms) return undefined;
  return {
    kms,
    key: { keyVaultName: kms.vaultName, keyName: kms.activeKey.name, keyVersion: kms.activeKey.version },
  };
}

export function sameKey(a: AzureKMSKey | undefined, b: AzureKMSKey | undefined): boolean {
  return a?.keyVaultName === b?.keyVaultName && a?.keyName === b?.keyName && a?.keyVersion === b?.keyVersion;
}

function isKey(v: unknown): v is AzureKMSKey {
  if (typeof v !== "object" || v === null) return false;
  const k = v as Record<string, unknown>;
  return (
    typeof k["keyVaultName"] === "string" &&
    typeof k["keyName"] === "string" &&
    typeof k["keyVersion"] === "string"
  );
}

/** The keys a work records its HostedCluster carries; undefined for none or a record unreadable. */
export function carriedKeys(work: KubeObject | undefined): EtcdKeys | undefined {
  const raw = work?.metadata.annotations?.[ETCD_KEYS_ANNOTATION];
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as { active?: unknown; backup?: unknown };
    if (!isKey(v.active)) return undefined;
    return { active: v.active, ...(isKey(v.backup) ? { backup: v.backup } : {}) };
  } catch {
    return undefined;
  }
}

export function keysAnnotation(keys: EtcdKeys | undefined): Record<string, string> {
  return keys ? { [ETCD_KEYS_ANNOTATION]: JSON.stringify(keys) } : {};
}

/**
 * The key HyperShift reports all etcd data encrypted with: the active key of the HostedCluster as
 * the agent read it, when EtcdDataEncryptionUpToDate is True about that generation.
 */
function confirmedKey(report: HostedClusterReport | undefined): AzureKMSKey | undefined {
  const c = report?.etcdDataEncryptionUpToDate;
  if (c?.status !== "True" || report?.generation === undefined) return undefined;
  return c.observedGeneration === report.generation ? report?.kmsKeys?.active : undefined;
}

/**
 * HyperShift reports the data re-encrypted with `keys.active` about a HostedCluster that carried
 * exactly `keys`: the report is about this rotation, not an earlier one with the same active key.
 */
export function reEncrypted(report: HostedClusterReport | undefined, keys: EtcdKeys): boolean {
  return sameKey(confirmedKey(report), keys.active) && sameKey(report?.kmsKeys?.backup, keys.backup);
}

const describeKey = (k: AzureKMSKey): string => `${k.keyVaultName}/${k.keyName} version ${k.keyVersion}`;

export interface KeyPlan {
  /** What the HostedCluster carries next; undefined when etcd uses the platform's keys. */
  keys?: EtcdKeys;
  /** The HcpCluster's ETCD_ENCRYPTION_CONDITION; undefined when etcd uses the platform's keys. */
  condition?: ConditionInput;
}

/**
 * The keys to send, from the key the spec wants, the keys the HostedCluster carries and whether
 * HyperShift reports the data re-encrypted with them:
 *
 *   nothing carried yet                          the wanted key, no backup
 *   carried active = wanted, no backup           unchanged
 *   carried active ≠ wanted, no backup           wanted active, the carried active as backup
 *   a backup carried, not yet re-encrypted       unchanged (a newer version waits)
 *   a backup carried, re-encrypted               the backup dropped; rotate again if wanted moved on
 */
export function planKeys(
  wanted: AzureKMSKey | undefined,
  carried: EtcdKeys | undefined,
  report: HostedClusterReport | undefined,
): KeyPlan {
  // secretEncryption cannot be removed (the CRDs refuse it); what is carried stays.
  if (!wanted) return carried ? { keys: carried, condition: encrypting(carried, report) } : {};
  if (!carried) return { keys: { active: wanted }, condition: encrypting({ active: wanted }, report) };
  let settled = carried;
  if (carried.backup) {
    if (!reEncrypted(report, carried)) return { keys: carried, condition: rotating(carried, wanted, report) };
    settled = { active: carried.active };
  }
  const keys = sameKey(settled.active, wanted) ? settled : { active: wanted, backup: settled.active };
  return { keys, condition: keys.backup ? rotating(keys, wanted, undefined) : encrypting(keys, report) };
}

/** No rotation under way: True once HyperShift says the data is all encrypted with the key. */
function encrypting(keys: EtcdKeys, report: HostedClusterReport | undefined): ConditionInput {
  const type = ETCD_ENCRYPTION_CONDITION;
  if (sameKey(confirmedKey(report), keys.active))
    return {
      type,
      status: "True",
      reason: "AsExpected",
      message: `All etcd data is encrypted with ${describeKey(keys.active)}`,
    };
  const hs = report?.etcdDataEncryptionUpToDate;
  return {
    type,
    status: "False",
    reason: hs?.status === "False" && hs.reason ? hs.reason : "WaitingForHyperShift",
    message: `Waiting for HyperShift to report etcd data encrypted with ${describeKey(keys.active)}${hs?.status === "False" && hs.message ? `: ${hs.message}` : ""}`,
  };
}

/** A rotation under way: the previous key stays the backup until HyperShift has re-encrypted. */
function rotating(
  keys: EtcdKeys,
  wanted: AzureKMSKey | undefined,
  report: HostedClusterReport | undefined,
): ConditionInput {
  const backup = keys.backup ? `; ${describeKey(keys.backup)} stays the backup key until then` : "";
  const queued =
    wanted && !sameKey(wanted, keys.active)
      ? `; version ${wanted.keyVersion} rotates in once it is done (HyperShift keeps one backup key)`
      : "";
  const hs = report?.etcdDataEncryptionUpToDate;
  const failed = hs?.status === "False" && hs.reason === "ReEncryptionFailed";
  return {
    type: ETCD_ENCRYPTION_CONDITION,
    status: "False",
    reason: failed ? "ReEncryptionFailed" : "ReEncryptionInProgress",
    message: `Re-encrypting etcd data with ${describeKey(keys.active)}${backup}${queued}${failed && hs.message ? `: ${hs.message}` : ""}`,
  };
}

/** HyperShift's spec.secretEncryption for the keys; the key management plugin runs as the kms identity. */
export function secretEncryption(
  keys: EtcdKeys,
  kms: Pick<KmsEncryptionSpec, "visibility">,
  hostedClusterName: string,
): SecretEncryptionSpec {
  return {
    type: "kms",
    kms: {
      provider: "Azure",
      azure: {
        activeKey: keys.active,
        ...(keys.backup ? { backupKey: keys.backup } : {}),
        kms: { credentialsSecretName: `${hostedClusterName}-kms`, objectEncoding: "utf-8" },
        keyVaultAccess: kms.visibility ?? "Public",
      },
    },
  };
}
