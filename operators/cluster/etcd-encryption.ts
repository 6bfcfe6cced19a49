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
import type { AzureKMSKey, SecretEncryptionSpec } from "../api/hypershift/v1beta1/index.ts";
import type { HcpCluster, KmsEncryptionSpec } from "../api/v1alpha1/index.ts";
import type { HostedClusterReport } from "../api/v1alpha1/feedback.ts";
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
  /**
   * HyperShift has found the active key usable (ValidAzureKMSConfig True about a HostedCluster
   * carrying it): data may be encrypted with it, so it is never replaced without becoming the backup.
   */
  activeUsable?: boolean;
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
    const v = JSON.parse(raw) as { active?: unknown; backup?: unknown; activeUsable?: unknown };
    if (!isKey(v.active)) return undefined;
    return {
      active: v.active,
      ...(isKey(v.backup) ? { backup: v.backup } : {}),
      ...(v.activeUsable === true ? { activeUsable: true } : {}),
    };
  } catch {
    return undefined;
  }
}

/** The record of `keys` on the work (the flag with it: it is about the work, not HyperShift's spec). */
export function keysAnnotation(keys: EtcdKeys | undefined): Record<string, string> {
  return keys ? { [ETCD_KEYS_ANNOTATION]: JSON.stringify(keys) } : {};
}

/** What this controller last wrote of a cluster's work: its generation and the keys it recorded. */
export interface WorkWritten {
  generation: number;
  keys: string | undefined;
}

export function writtenOf(work: KubeObject): WorkWritten {
  return {
    generation: work.metadata.generation ?? 0,
    keys: work.metadata.annotations?.[ETCD_KEYS_ANNOTATION],
  };
}

/**
 * The cached work is behind this controller's own last write of it: an older generation, or the
 * same one with another record of the keys (a change of the record alone keeps the generation).
 */
export function lagsBehind(current: KubeObject | undefined, written: WorkWritten | undefined): boolean {
  if (!current || !written) return false;
  const generation = current.metadata.generation ?? 0;
  if (generation !== written.generation) return generation < written.generation;
  return current.metadata.annotations?.[ETCD_KEYS_ANNOTATION] !== written.keys;
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

/** HyperShift's ValidAzureKMSConfig about a HostedCluster that carried `key` as its active key. */
function verdictOn(report: HostedClusterReport | undefined, key: AzureKMSKey): string | undefined {
  const c = report?.validAzureKMSConfig;
  if (!c || report?.generation === undefined || c.observedGeneration !== report.generation) return undefined;
  return sameKey(report.kmsKeys?.active, key) ? c.status : undefined;
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
 *   an active key HyperShift refuses and never   replaced by the wanted one, the backup kept: it
 *   found usable, another one wanted             encrypted nothing (a mistyped version is fixed)
 */
export function planKeys(
  wanted: AzureKMSKey | undefined,
  carried: EtcdKeys | undefined,
  report: HostedClusterReport | undefined,
): KeyPlan {
  // secretEncryption cannot be removed (the CRDs refuse it); what is carried stays.
  if (!wanted) return carried ? { keys: carried, condition: encrypting(carried, report) } : {};
  if (!carried) return { keys: { active: wanted }, condition: encrypting({ active: wanted }, report) };
  const current = withUsable(carried, report);
  if (refusedUnused(current, report) && !sameKey(wanted, current.active))
    return planned(
      { active: wanted, ...(current.backup ? { backup: current.backup } : {}) },
      wanted,
      undefined,
    );
  if (current.backup && !reEncrypted(report, current))
    return { keys: current, condition: rotating(current, wanted, report) };
  const settled: EtcdKeys = {
    active: current.active,
    ...(current.activeUsable ? { activeUsable: true } : {}),
  };
  if (sameKey(settled.active, wanted)) return planned(settled, wanted, report);
  return planned({ active: wanted, backup: settled.active }, wanted, report);
}

/** The carried keys with the active one marked usable once HyperShift found it so. */
function withUsable(carried: EtcdKeys, report: HostedClusterReport | undefined): EtcdKeys {
  if (carried.activeUsable || verdictOn(report, carried.active) !== "True") return carried;
  return { ...carried, activeUsable: true };
}

/** HyperShift refuses the active key and never found it usable: nothing is encrypted with it. */
function refusedUnused(keys: EtcdKeys, report: HostedClusterReport | undefined): boolean {
  return !keys.activeUsable && verdictOn(report, keys.active) === "False";
}

function planned(keys: EtcdKeys, wanted: AzureKMSKey, report: HostedClusterReport | undefined): KeyPlan {
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
