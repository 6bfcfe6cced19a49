/**
 * What comes back from the management cluster: the feedback rules a cluster's and a node pool's
 * work ask the agent for, and their decoding into what the HostedCluster and HyperShift's NodePool
 * reported. The controllers write the rules and read the reports; hcpctl reads the same reports.
 * Each value is small on purpose: OCM's agent refuses raw JSON values over 1 KiB, and a
 * HostedCluster's whole condition list is larger than that. Decoding is defensive: the agent sends
 * what it read, or nothing.
 */
import type { AzureKMSKey } from "../hypershift/v1beta1/index.ts";
import type { Condition } from "../meta/v1.ts";
import type { FeedbackValue, JsonPath, ManifestWorkObject } from "../work/v1.ts";

/** Feedback names of a HostedCluster's work. */
export const FEEDBACK = {
  available: "available",
  progressing: "progressing",
  degraded: "degraded",
  completedVersion: "completedVersion",
  latestUpdate: "latestUpdate",
  endpointHost: "endpointHost",
  endpointPort: "endpointPort",
  generation: "generation",
  validConfiguration: "validConfiguration",
  validAzureKMSConfig: "validAzureKMSConfig",
  etcdDataEncryptionUpToDate: "etcdDataEncryptionUpToDate",
  kmsActiveKey: "kmsActiveKey",
  kmsBackupKey: "kmsBackupKey",
} as const;

/** Feedback names of a HyperShift NodePool's work. */
export const POOL_FEEDBACK = { replicas: "replicas", version: "version", ready: "ready" } as const;

const conditionPath = (type: string): string => `.status.conditions[?(@.type=="${type}")]`;

export const HOSTED_CLUSTER_FEEDBACK_PATHS: JsonPath[] = [
  { name: FEEDBACK.available, path: conditionPath("Available") },
  { name: FEEDBACK.progressing, path: conditionPath("Progressing") },
  { name: FEEDBACK.degraded, path: conditionPath("Degraded") },
  // History is newest first: the first Completed entry is the version running now.
  {
    name: FEEDBACK.completedVersion,
    path: '.status.controlPlaneVersion.history[?(@.state=="Completed")].version',
  },
  { name: FEEDBACK.latestUpdate, path: ".status.controlPlaneVersion.history[0]" },
  { name: FEEDBACK.endpointHost, path: ".status.controlPlaneEndpoint.host" },
  { name: FEEDBACK.endpointPort, path: ".status.controlPlaneEndpoint.port" },
  // HyperShift validates spec.configuration (the OIDC providers among it) into ValidConfiguration;
  // its observedGeneration against the generation says whether that verdict is about this spec.
  { name: FEEDBACK.generation, path: ".metadata.generation" },
  { name: FEEDBACK.validConfiguration, path: conditionPath("ValidConfiguration") },
  // Customer-managed etcd keys: whether HyperShift can use the active key, whether all data is
  // encrypted with it, and the keys the HostedCluster carried when it said so (key rotation). The
  // agent's watch keeps spec.secretEncryption for these (maestro-agent/objects.ts
  // WATCHED_SPEC_FIELDS); a path into any other spec field would have it read every HostedCluster
  // from the apiserver at each status sync.
  { name: FEEDBACK.validAzureKMSConfig, path: conditionPath("ValidAzureKMSConfig") },
  { name: FEEDBACK.etcdDataEncryptionUpToDate, path: conditionPath("EtcdDataEncryptionUpToDate") },
  { name: FEEDBACK.kmsActiveKey, path: ".spec.secretEncryption.kms.azure.activeKey" },
  { name: FEEDBACK.kmsBackupKey, path: ".spec.secretEncryption.kms.azure.backupKey" },
];

/**
 * On the service-account signing key's Secret of a cluster's work: the key ID (`kid`) of the key
 * it holds. HyperShift's spec.serviceAccountSigningKey names the Secret and is immutable, so a
 * rotation changes the Secret's content, never its name; this annotation says which content the
 * management cluster has, without anyone reading the key back.
 */
export const SIGNING_KEY_ID_ANNOTATION = "hcp.aro.dev/signing-key-id";

/** Feedback name of the signing key's Secret in a cluster's work. */
export const SIGNING_KEY_FEEDBACK = { keyId: "signingKeyId" } as const;

/**
 * The annotation only: never the Secret's data. Bracketed, as the key holds dots. Metadata only,
 * so the agent answers it from what it remembers of the Secret (read at each apply and drift
 * check), never watching Secrets nor reading this one at each status sync.
 */
export const SIGNING_KEY_FEEDBACK_PATHS: JsonPath[] = [
  { name: SIGNING_KEY_FEEDBACK.keyId, path: `.metadata.annotations['${SIGNING_KEY_ID_ANNOTATION}']` },
];

/** The key ID the management cluster's signing-key Secret carries; undefined when not reported. */
export function appliedSigningKeyId(fb: Record<string, unknown>): string | undefined {
  return nonEmptyString(fb[SIGNING_KEY_FEEDBACK.keyId]);
}

export const NODE_POOL_FEEDBACK_PATHS: JsonPath[] = [
  { name: POOL_FEEDBACK.replicas, path: ".status.replicas" },
  { name: POOL_FEEDBACK.version, path: ".status.version" },
  { name: POOL_FEEDBACK.ready, path: conditionPath("Ready") },
];

/** What the HostedCluster reported through the work's feedback. */
export interface HostedClusterReport {
  conditions: Condition[];
  /** The newest Completed version in the history. */
  completedVersion?: string;
  /**
   * The version being rolled out over a completed one: the newest history entry is Partial and an
   * older one Completed. An upgrade.
   */
  updatingTo?: string;
  /** The version of a first install still rolling out: the only history entries are Partial. */
  installing?: string;
  endpoint?: { host: string; port: number };
  /** The HostedCluster's metadata.generation as the agent last read it. */
  generation?: number;
  /** HyperShift's verdict on spec.configuration, when it gave one. */
  validConfiguration?: Condition;
  /** Whether HyperShift can use the Azure KMS key (customer-managed etcd keys). */
  validAzureKMSConfig?: Condition;
  /** Whether all etcd data is encrypted with the active key. */
  etcdDataEncryptionUpToDate?: Condition;
  /** The Azure KMS keys spec.secretEncryption carried as the agent read it. */
  kmsKeys?: { active?: AzureKMSKey; backup?: AzureKMSKey };
}

/** What HyperShift's NodePool reported through feedback. */
export interface PoolReport {
  replicas?: number;
  version?: string;
  conditions: Array<{ type: string; status: string; reason?: string; message?: string }>;
}

/** The feedback values of one manifest of a work, raw JSON parsed; absent names are absent. */
export function feedbackOf(
  work: ManifestWorkObject | undefined,
  match: { kind: string; name: string },
): Record<string, unknown> {
  const manifest = work?.status?.resourceStatus?.manifests?.find(
    (m) => m.resourceMeta.kind === match.kind && m.resourceMeta.name === match.name,
  );
  const out: Record<string, unknown> = {};
  for (const v of manifest?.statusFeedback?.values ?? []) out[v.name] = fieldValueOf(v);
  return out;
}

function fieldValueOf(v: FeedbackValue): unknown {
  const f = v.fieldValue;
  switch (f.type) {
    case "Integer":
      return f.integer;
    case "String":
      return f.string;
    case "Boolean":
      return f.boolean;
    case "JsonRaw":
      try {
        return JSON.parse(f.jsonRaw ?? "null") as unknown;
      } catch {
        return undefined;
      }
  }
}

function isCondition(c: unknown): c is Condition {
  return typeof c === "object" && c !== null && typeof (c as { type?: unknown }).type === "string";
}

function nonEmptyString(v: unknown): string | undefined {
  return typeof v === "string" && v ? v : undefined;
}

export function hostedReport(fb: Record<string, unknown>): HostedClusterReport {
  const conditions = [FEEDBACK.available, FEEDBACK.progressing, FEEDBACK.degraded]
    .map((name) => fb[name])
    .filter(isCondition);
  const latest = fb[FEEDBACK.latestUpdate] as { state?: unknown; version?: unknown } | undefined;
  const host = nonEmptyString(fb[FEEDBACK.endpointHost]);
  const port = fb[FEEDBACK.endpointPort];
  const completedVersion = nonEmptyString(fb[FEEDBACK.completedVersion]);
  const generation = fb[FEEDBACK.generation];
  const validConfiguration = fb[FEEDBACK.validConfiguration];
  const rollingOut = latest?.state === "Partial" ? nonEmptyString(latest.version) : undefined;
  return {
    conditions,
    completedVersion,
    // HyperShift's first history entry is Partial until the install completes: not an upgrade.
    updatingTo: completedVersion ? rollingOut : undefined,
    installing: completedVersion ? undefined : rollingOut,
    endpoint: host && typeof port === "number" ? { host, port } : undefined,
    generation: typeof generation === "number" ? generation : undefined,
    validConfiguration: isCondition(validConfiguration) ? validConfiguration : undefined,
    ...kmsReport(fb),
  };
}

function isKmsKey(k: unknown): k is AzureKMSKey {
  if (typeof k !== "object" || k === null) return false;
  const key = k as Record<string, unknown>;
  return ["keyVaultName", "keyName", "keyVersion"].every((f) => typeof key[f] === "string");
}

/** The KMS conditions and keys, each only when the agent sent it well formed. */
function kmsReport(
  fb: Record<string, unknown>,
): Pick<HostedClusterReport, "validAzureKMSConfig" | "etcdDataEncryptionUpToDate" | "kmsKeys"> {
  const valid = fb[FEEDBACK.validAzureKMSConfig];
  const upToDate = fb[FEEDBACK.etcdDataEncryptionUpToDate];
  const active = fb[FEEDBACK.kmsActiveKey];
  const backup = fb[FEEDBACK.kmsBackupKey];
  return {
    ...(isCondition(valid) ? { validAzureKMSConfig: valid } : {}),
    ...(isCondition(upToDate) ? { etcdDataEncryptionUpToDate: upToDate } : {}),
    ...(isKmsKey(active) ? { kmsKeys: { active, ...(isKmsKey(backup) ? { backup } : {}) } } : {}),
  };
}

export function poolReport(fb: Record<string, unknown>): PoolReport {
  const ready = fb[POOL_FEEDBACK.ready];
  const replicas = fb[POOL_FEEDBACK.replicas];
  return {
    conditions: isCondition(ready) ? [ready] : [],
    replicas: typeof replicas === "number" ? replicas : undefined,
    version: nonEmptyString(fb[POOL_FEEDBACK.version]),
  };
}

/**
 * Reasons HyperShift and CAPI give a NodePool that is getting there (WaitingForAvailable,
 * WaitingForAvailableMachines, WaitingForNodeRef, scaling, updating); any other reason for
 * Ready=False is a failure someone must look at.
 */
export function isProgressReason(reason: string): boolean {
  return /^(WaitingFor|Scaling|Updating|AsExpected)/.test(reason);
}
