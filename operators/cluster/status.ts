/**
 * HcpCluster status from the facts the phases recorded: one condition per step (placement,
 * release, each Azure resource, the OIDC issuer, the HostedCluster work, the HostedCluster itself,
 * DNS records), then the summary conditions Ready, Progressing and Degraded and a phase for
 * humans. Every condition goes through setCondition; the whole status is written once per
 * reconcile. While the management cluster's agent is not Connected, a Ready that rests on its
 * reports is Unknown (StatusStale, hcp/staleness.ts); the phase stays what was last known.
 */
import {
  HCP_CLUSTER_STEPS,
  type HcpCluster,
  type HcpClusterAzureStatus,
  type HcpClusterBackupStatus,
  type HcpClusterRestoreStatus,
  type HcpClusterSigningKeyStatus,
  type HcpClusterStatus,
  type HcpClusterWorkTemplateStatus,
  type Phase,
} from "../api/v1alpha1/index.ts";
import type { HostedClusterReport } from "../api/v1alpha1/feedback.ts";
import type { ClusterNames } from "../api/v1alpha1/clusternames.ts";
import { staleReady, type Staleness } from "../hcp/staleness.ts";
import {
  degradedByUserFailure,
  notDegraded,
  firstNotReady,
  firstUserFailure,
  heldBy,
  stepCondition,
  type Steps,
} from "../hcp/steps.ts";
import { getCondition, setCondition, type Condition, type ConditionInput } from "../runtime/conditions.ts";
import { ingressTypeOf } from "./networking.ts";
import { workTemplateCondition } from "./work-template.ts";
import { BACKUPS_HEALTHY } from "./backup.ts";

export const CONDITIONS = {
  Ready: "Ready",
  Progressing: "Progressing",
  Degraded: "Degraded",
  Placed: "Placed",
  ValidVersion: "ValidVersion",
  ResourceGroupReady: "ResourceGroupReady",
  DnsZoneReady: "DnsZoneReady",
  DnsDelegated: "DnsDelegated",
  IngressReady: "IngressReady",
  OidcIssuerReady: "OidcIssuerReady",
  HostedClusterApplied: "HostedClusterApplied",
  HostedClusterValid: "HostedClusterValid",
  HostedClusterAvailable: "HostedClusterAvailable",
  DnsRecordsReady: "DnsRecordsReady",
  /** True once the release the control plane runs is past its end of life (not a step: it holds nothing). */
  VersionEndOfLife: "VersionEndOfLife",
  /** True while disruptive work the service starts on its own waits for a maintenance window (not a step). */
  MaintenanceDeferred: "MaintenanceDeferred",
  /** False while the work waits for a RefreshWorkTemplate run to take a newer template (not a step). */
  WorkTemplateCurrent: "WorkTemplateCurrent",
  /** Whether the backup Schedule takes backups in time (not a step: backups hold nothing up). */
  BackupsHealthy: BACKUPS_HEALTHY,
  Deleting: "Deleting",
  Paused: "Paused",
} as const;

/** The steps in the order they run; a step that is not True holds the ones after it. */
export const STEP_CONDITIONS =
  HCP_CLUSTER_STEPS satisfies readonly (typeof CONDITIONS)[keyof typeof CONDITIONS][];

export type StepCondition = (typeof STEP_CONDITIONS)[number];

/** Steps whose state the management cluster's agent reports: the HostedCluster applied, valid, available. */
const AGENT_STEPS: readonly StepCondition[] = [
  CONDITIONS.HostedClusterApplied,
  CONDITIONS.HostedClusterValid,
  CONDITIONS.HostedClusterAvailable,
];

export interface ClusterFacts {
  cluster: HcpCluster;
  names: ClusterNames;
  managementCluster?: string;
  steps: Steps<StepCondition>;
  hosted?: HostedClusterReport;
  /** The release the control plane is asked to run now (resolveRelease); status keeps the last one. */
  desiredVersion?: string;
  /** VersionEndOfLife, when resolveRelease ran (version.ts). */
  versionEndOfLife?: ConditionInput;
  deleting?: { reason: string; message: string };
  /** What the Azure steps found ready in this reconcile; status keeps what they found before. */
  azure: HcpClusterAzureStatus;
  /** The cluster's OIDC issuer URL, once its signing key is stored (reconcileOidcIssuer). */
  issuerURL?: string;
  /**
   * With a customer's etcd key: which key encrypts the data and how a rotation stands
   * (etcd-encryption.ts, set by applyWork). Not a step: a rotation holds nothing up.
   */
  etcdEncryption?: ConditionInput;
  /** An automatic upgrade waiting for the cluster's maintenance window (version.ts). */
  maintenanceDeferred?: ConditionInput;
  /**
   * The signing keys' IDs this reconcile saw: active and published (reconcileOidcIssuer), applied
   * on the management cluster (observeHostedCluster); status keeps what it said of the others.
   */
  signingKeys?: HcpClusterSigningKeyStatus;
  /** The work's template revision and the current one, when applyWork looked (work-template.ts). */
  workTemplate?: HcpClusterWorkTemplateStatus;
  /** The backup Schedule's report and BackupsHealthy, when the work was observed (backup.ts). */
  backup?: { status: HcpClusterBackupStatus; condition: ConditionInput };
  /** The restore spec.restore asks for, when the work was observed (restore.ts); status: none without one. */
  restore?: { status?: HcpClusterRestoreStatus };
}

function hostedDegraded(facts: ClusterFacts): Condition | undefined {
  const c = getCondition(facts.hosted?.conditions, "Degraded");
  return c?.status === "True" ? c : undefined;
}

/** Degraded: the first failure only the user can fix, else HyperShift's own Degraded. */
function degradedCondition(facts: ClusterFacts): ConditionInput {
  const failure = degradedByUserFailure(CONDITIONS.Degraded, STEP_CONDITIONS, facts.steps);
  if (failure) return failure;
  const hc = hostedDegraded(facts);
  if (hc)
    return {
      type: CONDITIONS.Degraded,
      status: "True",
      reason: `HostedCluster${hc.reason}`,
      message: `HostedCluster ${facts.names.hostedClusterNamespace}/${facts.names.hostedClusterName} is degraded: ${hc.message}`,
    };
  return notDegraded(CONDITIONS.Degraded);
}

/** Ready: every step done and nothing degraded; otherwise the step (or problem) that holds it. */
function readyCondition(facts: ClusterFacts, degraded: ConditionInput): ConditionInput {
  const blocker = firstNotReady(STEP_CONDITIONS, facts.steps);
  if (blocker) return heldBy(CONDITIONS.Ready, "False", blocker);
  if (degraded.status === "True")
    return { type: CONDITIONS.Ready, status: "False", reason: degraded.reason, message: degraded.message };
  const where = facts.managementCluster ?? "";
  return {
    type: CONDITIONS.Ready,
    status: "True",
    reason: "AsExpected",
    message: `The cluster is ready on ${where}`,
  };
}

/**
 * Progressing: stopped while the user must act; an upgrade; the step under way; a first install
 * HyperShift has not completed (the only one the steps do not name); or nothing to do.
 */
function progressingCondition(facts: ClusterFacts, degraded: ConditionInput): ConditionInput {
  const type = CONDITIONS.Progressing;
  if (degraded.status === "True")
    return { type, status: "False", reason: "UserActionRequired", message: degraded.message };
  const updating = facts.hosted?.updatingTo;
  if (updating)
    return {
      type,
      status: "True",
      reason: "Upgrading",
      message: `Upgrading the control plane to ${updating}`,
    };
  const blocker = firstNotReady(STEP_CONDITIONS, facts.steps);
  if (blocker) return heldBy(type, "True", blocker);
  const installing = facts.hosted?.installing;
  if (installing)
    return {
      type,
      status: "True",
      reason: "Installing",
      message: `Installing the control plane, ${installing}`,
    };
  return { type, status: "False", reason: "AsExpected", message: "Nothing to roll out" };
}

function summary(facts: ClusterFacts): ConditionInput[] {
  const degraded = degradedCondition(facts);
  if (facts.deleting) {
    const { reason, message } = facts.deleting;
    return [
      { type: CONDITIONS.Ready, status: "False", reason: "Deleting", message },
      { type: CONDITIONS.Progressing, status: "True", reason, message },
      degraded,
    ];
  }
  return [readyCondition(facts, degraded), progressingCondition(facts, degraded), degraded];
}

/** The phase for humans: a first install is Provisioning until HyperShift completes it, never Updating. */
function phaseOf(facts: ClusterFacts, conditions: Condition[]): Phase {
  if (facts.deleting) return "Deleting";
  if (getCondition(conditions, CONDITIONS.Degraded)?.status === "True") return "Degraded";
  if (facts.hosted?.updatingTo) return "Updating";
  if (getCondition(conditions, CONDITIONS.Ready)?.status === "True" && !facts.hosted?.installing)
    return "Ready";
  return "Provisioning";
}

/**
 * How settings that are not steps stand: the customer's etcd key (a rotation holds nothing up),
 * the end of life of the release that runs (it keeps running), the work's template revision, the
 * backups (they hold nothing up either).
 */
function settingConditions(facts: ClusterFacts): ConditionInput[] {
  const template = facts.workTemplate ? workTemplateCondition(facts.workTemplate) : undefined;
  return [
    facts.etcdEncryption,
    facts.versionEndOfLife,
    maintenanceCondition(facts),
    template,
    facts.backup?.condition,
  ].filter((c) => c !== undefined);
}

/** MaintenanceDeferred while something waits for a window; False once it no longer does, never before. */
function maintenanceCondition(facts: ClusterFacts): ConditionInput | undefined {
  if (facts.maintenanceDeferred) return facts.maintenanceDeferred;
  const before = getCondition(facts.cluster.status?.conditions, CONDITIONS.MaintenanceDeferred);
  if (before?.status !== "True") return undefined;
  return {
    type: CONDITIONS.MaintenanceDeferred,
    status: "False",
    reason: "NothingDeferred",
    message: "Nothing waits for a maintenance window",
  };
}

function lifecycleConditions(facts: ClusterFacts): ConditionInput[] {
  const paused: ConditionInput = facts.cluster.spec.paused
    ? {
        type: CONDITIONS.Paused,
        status: "True",
        reason: "Paused",
        message: "spec.paused is set: no changes roll out",
      }
    : { type: CONDITIONS.Paused, status: "False", reason: "NotPaused", message: "Changes roll out" };
  const { deleting } = facts;
  return deleting ? [paused, { type: CONDITIONS.Deleting, status: "True", ...deleting }] : [paused];
}

/** The versions: what HyperShift reported running (else what the status said), and what it is asked to run. */
function versionFields(facts: ClusterFacts): Pick<HcpClusterStatus, "version" | "desiredVersion"> {
  const previous = facts.cluster.status ?? {};
  const version = facts.hosted?.completedVersion ?? previous.version;
  const desiredVersion = facts.desiredVersion ?? previous.desiredVersion;
  return { ...(version ? { version } : {}), ...(desiredVersion ? { desiredVersion } : {}) };
}

/** Versions and URLs: what HyperShift reported, else what the status already said. */
function observedFields(
  facts: ClusterFacts,
): Pick<HcpClusterStatus, "version" | "desiredVersion" | "apiURL" | "consoleURL" | "issuerURL"> {
  const previous = facts.cluster.status ?? {};
  const issuerURL = facts.issuerURL ?? previous.issuerURL;
  const endpoint = facts.hosted?.endpoint;
  const apiURL = endpoint ? `https://${endpoint.host}:${endpoint.port}` : previous.apiURL;
  // Without an ingress HyperShift disables the console too: there is no console URL to give.
  const console = ingressTypeOf(facts.cluster) !== "Disabled";
  return {
    ...versionFields(facts),
    ...(issuerURL ? { issuerURL } : {}),
    ...(apiURL ? { apiURL } : {}),
    ...(apiURL && console
      ? { consoleURL: endpoint ? facts.names.consoleURL : (previous.consoleURL ?? facts.names.consoleURL) }
      : {}),
  };
}

function azureFields(facts: ClusterFacts): Pick<HcpClusterStatus, "azure"> {
  const before = facts.cluster.status?.azure;
  const dnsZone = facts.azure.dnsZone ?? before?.dnsZone;
  const azure: HcpClusterAzureStatus = {
    dnsZone,
    apiIP: facts.azure.apiIP ?? before?.apiIP,
    ingressIP: facts.azure.ingressIP ?? before?.ingressIP,
  };
  const set = Object.entries(azure).filter(([, v]) => v !== undefined);
  return set.length > 0 ? { azure: Object.fromEntries(set) } : {};
}

/**
 * Whether Ready rests on what the agent reported: every step done (the HostedCluster available),
 * HyperShift's own Degraded, or the HostedCluster steps holding it; not a deletion, a failure only
 * the user can fix, or a step of the service's own (placement, release, Azure).
 */
function readyFromAgent(facts: ClusterFacts): boolean {
  if (facts.deleting || firstUserFailure(STEP_CONDITIONS, facts.steps)) return false;
  const blocker = firstNotReady(STEP_CONDITIONS, facts.steps);
  return !blocker || AGENT_STEPS.includes(blocker.type);
}

/** The conditions with Ready as a stale report, when Ready rests on the agent's reports. */
function withStaleReady(conditions: Condition[], facts: ClusterFacts, stale: Staleness): Condition[] {
  const ready = getCondition(conditions, CONDITIONS.Ready);
  if (!ready || !readyFromAgent(facts)) return conditions;
  return setCondition(conditions, staleReady(ready, stale), {
    observedGeneration: facts.cluster.metadata.generation,
  });
}

/**
 * The whole status. `succeeded`: the reconcile got through without an error; only then does
 * `observedGeneration` move to this generation (as Cluster API does), so a client waiting on it
 * knows the generation was really acted on. `stale`: the management cluster's agent is not
 * Connected (hcp/staleness.ts).
 */
export function composeStatus(
  facts: ClusterFacts,
  opts: { succeeded: boolean; stale?: Staleness },
): HcpClusterStatus {
  const { cluster } = facts;
  const generation = cluster.metadata.generation;
  const observedGeneration = opts.succeeded ? generation : cluster.status?.observedGeneration;
  const stamp = { observedGeneration: generation };
  let conditions: Condition[] = cluster.status?.conditions ?? [];
  for (const type of STEP_CONDITIONS) {
    const s = facts.steps[type];
    if (s) conditions = setCondition(conditions, stepCondition(type, s), stamp);
  }
  for (const c of [...settingConditions(facts), ...summary(facts), ...lifecycleConditions(facts)])
    conditions = setCondition(conditions, c, stamp);
  const phase = phaseOf(facts, conditions);
  if (opts.stale) conditions = withStaleReady(conditions, facts, opts.stale);
  return {
    conditions,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    phase,
    clusterID: facts.names.clusterID,
    ...(facts.managementCluster
      ? {
          managementCluster: facts.managementCluster,
          hostedClusterNamespace: facts.names.hostedClusterNamespace,
        }
      : {}),
    ...observedFields(facts),
    ...azureFields(facts),
    ...signingKeyFields(facts),
    ...workTemplateFields(facts),
    ...backupFields(facts),
    ...restoreFields(facts),
  };
}

/** The restore as this reconcile observed it, else what the status said while spec.restore still asks for it. */
function restoreFields(facts: ClusterFacts): Pick<HcpClusterStatus, "restore"> {
  const { cluster } = facts;
  const asked = cluster.spec.restore?.backupName;
  const previous = cluster.status?.restore?.backupName === asked ? cluster.status?.restore : undefined;
  const restore = facts.restore ? facts.restore.status : previous;
  return restore ? { restore } : {};
}

/** The backup Schedule as last reported: this reconcile's, else what the status said. */
function backupFields(facts: ClusterFacts): Pick<HcpClusterStatus, "backup"> {
  const backup = facts.backup?.status ?? facts.cluster.status?.backup;
  return backup ? { backup } : {};
}

/** The work's template revision from this reconcile, else what the status said (a held work's evidence). */
function workTemplateFields(facts: ClusterFacts): Pick<HcpClusterStatus, "workTemplate"> {
  const workTemplate = facts.workTemplate ?? facts.cluster.status?.workTemplate;
  return workTemplate ? { workTemplate } : {};
}

/** Each key ID from this reconcile, else what the status said: a rotation's evidence (maintenance). */
function signingKeyFields(facts: ClusterFacts): Pick<HcpClusterStatus, "serviceAccountSigningKey"> {
  const merged = { ...facts.cluster.status?.serviceAccountSigningKey, ...facts.signingKeys };
  return Object.keys(merged).length > 0 ? { serviceAccountSigningKey: merged } : {};
}
