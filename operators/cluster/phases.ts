/**
 * The phases of an HcpCluster reconcile, in the order they run: place, resolve the release, the
 * Azure resources (resource group, DNS zone, NS delegation, ingress), the OIDC issuer (signing
 * key, published documents), the HostedCluster work, observing the HostedCluster through the
 * work's feedback, and the DNS records. Each phase records its step in `scope.facts` and returns
 * when to look again; a phase whose input is not ready yet (an earlier step) does nothing, and its
 * condition keeps saying why. Every phase reads the world before it writes, so a crash at any line
 * and a restart converge.
 */
import { INGRESS_DISABLED_SINCE, type ManagementCluster } from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork, type ManifestWorkObject } from "../api/work/v1.ts";
import { feedbackOf, hostedReport, type HostedClusterReport } from "../api/v1alpha1/feedback.ts";
import { MANAGEMENT_CLUSTER_INDEX } from "../hcp/indexes.ts";
import { isReady, workStep, type ReadyStep, type StepState } from "../hcp/steps.ts";
import { getCondition, type Condition } from "../runtime/conditions.ts";
import { errorMessage } from "../runtime/errors.ts";
import { failpoint } from "../runtime/failpoints.ts";
import { lowestNonZero, type Phase, type PhaseResult } from "../runtime/phases.ts";
import { hostedClusterWork } from "./hostedcluster.ts";
import { runsWithoutIngress } from "./networking.ts";
import { resolveVersion } from "./version.ts";
import { carriedKeys, lagsBehind, planKeys, wantedKey, writtenOf, type KeyPlan } from "./etcd-encryption.ts";
import { issuerDocuments, issuerPath, issuerURL } from "./oidc.ts";
import type { InfraResult } from "./infrastructure.ts";
import { place as choosePlacement } from "./placement.ts";
import type { Trusted } from "./holds.ts";
import { externalAuthsCarried } from "../hcp/external-auths.ts";
import {
  AZURE_POLL_MS,
  clusterWork,
  externalAuthsOf,
  infraRecheckMs,
  recheckMs,
  type ClusterScope,
} from "./scope.ts";
import { CONDITIONS, type StepCondition } from "./status.ts";

/** Thrown (after the step is recorded) so the queue retries with backoff. */
export class RetryableStepError extends Error {
  override readonly name = "RetryableStepError";
}

/**
 * Records a step and says when to look again: a pending step at its poll interval, a user failure
 * at the recheck interval; a retryable failure throws, so the queue backs off.
 */
export function recordStep(scope: ClusterScope, type: StepCondition, step: StepState): PhaseResult {
  scope.facts.steps[type] = step;
  if (step.state === "pending") return { requeueAfterMs: step.retryAfterMs ?? AZURE_POLL_MS };
  if (step.state === "failed" && step.userActionRequired) return { requeueAfterMs: recheckMs(scope) };
  if (step.state === "failed") throw new RetryableStepError(`${type}: ${step.message}`);
  return {};
}

function stepReady(scope: ClusterScope, type: StepCondition): boolean {
  return isReady(scope.facts.steps[type]);
}

interface TrustOptions<R> {
  /** The result as the cluster's status recorded it; default: a step with no result fields. */
  recorded?: (step: ReadyStep) => R | undefined;
  /** False when a trusted result no longer fits this reconcile's inputs (the step runs). */
  stillHolds?: (result: R) => boolean;
  /**
   * Whose read budget the step's recheck spends (RecheckBudget): an Azure subscription, by default
   * the cluster's; null for a step that reads no ARM (the issuer's storage).
   */
  account?: string | null;
}

/**
 * Runs one Azure step unless a failure only the user can fix still stands for this generation
 * (see UserErrorHold) or the step was found ready recently (VerifiedSteps), and records it.
 * Resolves the step's result when it is ready. A step found ready is looked at again at its
 * recheck, so drift is found even when nothing else wakes the cluster. `recorded` rebuilds the
 * result from what the cluster's status recorded, for the first look after a restart.
 */
async function azureStep<R extends InfraResult>(
  scope: ClusterScope,
  type: StepCondition,
  call: () => Promise<R>,
  opts: TrustOptions<R> = {},
): Promise<{ phase: PhaseResult; ready?: R }> {
  const owner = scope.cluster.metadata.uid ?? "";
  const generation = scope.cluster.metadata.generation ?? 0;
  const held = scope.memory.holds.held(owner, type, generation);
  if (held) return { phase: recordStep(scope, type, held) };
  const { verified } = scope.memory;
  const trusted = trustedResult(scope, type, opts);
  if (trusted && (opts.stillHolds?.(trusted.result) ?? true)) {
    recordStep(scope, type, trusted.result.step);
    return { phase: { requeueAfterMs: trusted.recheckInMs, periodic: true }, ready: trusted.result };
  }
  const result = await call();
  scope.memory.holds.note(owner, type, generation, result.step);
  if (result.step.state !== "ready") {
    verified.drop(owner, type);
    return { phase: recordStep(scope, type, result.step) };
  }
  verified.note(owner, type, generation, result);
  recordStep(scope, type, result.step);
  return { phase: { requeueAfterMs: infraRecheckMs(scope), periodic: true }, ready: result };
}

/** What this reconcile may take as the step's result without reading it, if anything. */
function trustedResult<R extends InfraResult>(
  scope: ClusterScope,
  type: StepCondition,
  opts: TrustOptions<R>,
): Trusted<R> | undefined {
  const owner = scope.cluster.metadata.uid ?? "";
  const generation = scope.cluster.metadata.generation ?? 0;
  const recorded = opts.recorded ?? ((step: ReadyStep) => ({ step }) as R);
  const account = opts.account === undefined ? scope.infraSpec.subscriptionId : opts.account;
  return (
    scope.memory.verified.verified<R>(owner, type, generation) ??
    seedFromStatus(scope, type, recorded) ??
    recheckLater<R>(scope, type, account)
  );
}

/**
 * A recheck that is due waits for a slot of its subscription's budget, still trusted; when the
 * slot comes it is read. Undefined: read now (a slot is free, or this is no recheck).
 */
function recheckLater<R>(
  scope: ClusterScope,
  type: StepCondition,
  account: string | null,
): Trusted<R> | undefined {
  const owner = scope.cluster.metadata.uid ?? "";
  const { verified, rechecks } = scope.memory;
  if (account === null || !verified.recheckDue(owner, type, scope.cluster.metadata.generation ?? 0))
    return undefined;
  const waitMs = rechecks.reserve(account);
  return waitMs > 0 ? verified.postpone<R>(owner, type, waitMs) : undefined;
}

/** A step the cluster's status shows ready for this generation, trusted once after a restart. */
function seedFromStatus<R extends InfraResult>(
  scope: ClusterScope,
  type: StepCondition,
  recorded: (step: ReadyStep) => R | undefined,
): Trusted<R> | undefined {
  const { cluster } = scope;
  const generation = cluster.metadata.generation ?? 0;
  const c = getCondition(cluster.status?.conditions, type);
  if (c?.status !== "True" || c.observedGeneration !== generation) return undefined;
  const result = recorded({ state: "ready", reason: c.reason, message: c.message ?? "" });
  if (!result) return undefined;
  return scope.memory.verified.seed(cluster.metadata.uid ?? "", type, generation, result);
}

// ---- placement and release ---------------------------------------------------------------

/**
 * Control planes per ManagementCluster, counting choices the informer may not show yet (a
 * reservation lasts until the status naming it is written). From the index: placing one cluster
 * costs the load of the candidates, not a walk over every cluster of the region.
 */
function placementLoad(scope: ClusterScope, candidates: readonly ManagementCluster[]): Map<string, number> {
  const load = new Map<string, number>();
  for (const m of candidates) {
    const name = m.metadata.name ?? "";
    load.set(name, scope.deps.clusters.countByIndex(MANAGEMENT_CLUSTER_INDEX, name));
  }
  for (const [uid, r] of scope.memory.reservations) {
    // Once the informer shows the placement, the index counts it: the reservation has done its work.
    if (scope.deps.clusters.get(r.namespace, r.name)?.status?.managementCluster) {
      scope.memory.reservations.delete(uid);
      continue;
    }
    if (load.has(r.managementCluster))
      load.set(r.managementCluster, (load.get(r.managementCluster) ?? 0) + 1);
  }
  return load;
}

/** Where the cluster already is: its status, an existing work's consumer, or a reservation. */
function existingPlacement(scope: ClusterScope): string | undefined {
  const work = clusterWork(scope);
  const byConsumer = work
    ? scope.deps.managementClusters.list().find((m) => m.spec.consumerName === work.metadata.namespace)
    : undefined;
  return (
    scope.cluster.status?.managementCluster ??
    byConsumer?.metadata.name ??
    scope.memory.reservations.get(scope.cluster.metadata.uid ?? "")?.managementCluster
  );
}

/**
 * Keeps a placement; recovers one from an existing work; otherwise places now. Not placed (no room,
 * no match) and placed on a ManagementCluster that is missing are not retried: the watch on
 * ManagementClusters brings the cluster back when one appears or frees room.
 */
export const place: Phase<ClusterScope> = (_ctx, scope) => {
  const { deps, cluster, facts } = scope;
  let chosen = existingPlacement(scope);
  if (!chosen) {
    const candidates = deps.managementClusters.list();
    const placement = choosePlacement(
      candidates,
      placementLoad(scope, candidates),
      cluster.spec.placement?.managementClusterSelector,
    );
    if (!placement.placed) {
      const { reason, message } = placement;
      facts.steps[CONDITIONS.Placed] = { state: "failed", reason, message, userActionRequired: false };
      return {};
    }
    chosen = placement.managementCluster.metadata.name ?? "";
    const { namespace = "", name = "" } = cluster.metadata;
    scope.memory.reservations.set(cluster.metadata.uid ?? "", { managementCluster: chosen, namespace, name });
    scope.log.info("Placing the cluster", { managementCluster: chosen });
  }
  facts.managementCluster = chosen;
  const mc = deps.managementClusters.list().find((m) => m.metadata.name === chosen);
  if (!mc) {
    facts.steps[CONDITIONS.Placed] = {
      state: "pending",
      reason: "ManagementClusterMissing",
      message: `ManagementCluster ${chosen} the cluster is placed on does not exist (yet)`,
    };
    return {};
  }
  scope.consumer = mc.spec.consumerName;
  return recordStep(scope, CONDITIONS.Placed, {
    state: "ready",
    reason: "Placed",
    message: `Placed on ${chosen}`,
  });
};

/**
 * The release spec.version leads to on the update graph (version.ts): the next hop of an upgrade,
 * held (ValidVersion False) where the graph, an end of life or a node pool forbids it. Looks again
 * when a release's end of life passes: the plan may change then with no object changing.
 */
export const resolveRelease: Phase<ClusterScope> = (_ctx, scope) => {
  if (!stepReady(scope, CONDITIONS.Placed)) return {};
  const { step, recheckMs } = resolveVersion(scope);
  const phase = recordStep(scope, CONDITIONS.ValidVersion, step);
  const requeueAfterMs = lowestNonZero(phase.requeueAfterMs, recheckMs);
  return requeueAfterMs ? { requeueAfterMs, periodic: !phase.requeueAfterMs } : {};
};

// ---- Azure --------------------------------------------------------------------------------

export const reconcileResourceGroup: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (!stepReady(scope, CONDITIONS.ValidVersion)) return {};
  const { infra } = scope.deps;
  return (
    await azureStep(scope, CONDITIONS.ResourceGroupReady, () =>
      infra.ensureResourceGroup(scope.infraSpec, { signal }),
    )
  ).phase;
};

export const reconcileDnsZone: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (!stepReady(scope, CONDITIONS.ResourceGroupReady)) return {};
  const { infra } = scope.deps;
  const zone = await azureStep(
    scope,
    CONDITIONS.DnsZoneReady,
    () => infra.ensureDnsZone(scope.infraSpec, { signal }),
    {
      recorded: (step) => {
        const zone = scope.cluster.status?.azure?.dnsZone;
        if (zone?.name !== scope.infraSpec.zoneName || zone.nameServers.length === 0) return undefined;
        return { step, nameServers: zone.nameServers };
      },
    },
  );
  if (zone.ready) failpoint("cluster/after-dns-zone");
  scope.nameServers = zone.ready?.nameServers ?? [];
  if (zone.ready?.nameServers)
    scope.facts.azure.dnsZone = { name: scope.infraSpec.zoneName, nameServers: zone.ready.nameServers };
  return zone.phase;
};

/** NS records for the cluster's zone in the region's parent zone, which must be the cluster's base domain. */
export const reconcileDelegation: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (!stepReady(scope, CONDITIONS.DnsZoneReady)) return {};
  const { infra, parentZone } = scope.deps;
  const { baseDomain } = scope.facts.names;
  if (baseDomain.toLowerCase() !== parentZone.name.toLowerCase())
    return recordStep(scope, CONDITIONS.DnsDelegated, {
      state: "failed",
      reason: "UnknownBaseDomain",
      message: `spec.dns.baseDomain ${baseDomain} is not a zone of this region; use ${parentZone.name} or leave it empty`,
      userActionRequired: true,
    });
  const nameServers = scope.nameServers ?? [];
  return (
    await azureStep(
      scope,
      CONDITIONS.DnsDelegated,
      () => infra.ensureDelegation(scope.infraSpec, nameServers, { signal }),
      { account: parentZone.subscriptionId },
    )
  ).phase;
};

/** The addresses the status recorded for the ingress step; a status from before apiIP had one IP. */
function recordedAddresses(scope: ClusterScope): { apiIp: string; ingressIp?: string } | undefined {
  const azure = scope.cluster.status?.azure;
  const type = scope.infraSpec.ingress.type;
  const apiIp = azure?.apiIP ?? (type === "Public" ? azure?.ingressIP : undefined);
  if (!apiIp) return undefined;
  if (type === "Disabled") return { apiIp };
  return azure?.ingressIP ? { apiIp, ingressIp: azure.ingressIP } : undefined;
}

/**
 * A Disabled ingress on a release HyperShift cannot run without one. The CRD refuses it for the
 * spec's version at creation; this holds the release the version resolved to, so that no
 * HostedCluster is made that HyperShift would fail on.
 */
function ingressUnsupported(scope: ClusterScope): StepState | undefined {
  const { release, cluster } = scope;
  if (scope.infraSpec.ingress.type !== "Disabled" || !release || runsWithoutIngress(release.version))
    return undefined;
  const { major, minor } = INGRESS_DISABLED_SINCE;
  return {
    state: "failed",
    reason: "IngressCannotBeDisabled",
    message: `spec.ingress.type Disabled needs OpenShift ${major}.${minor} or newer; spec.version.id ${cluster.spec.version.id} resolves to ${release.version}`,
    userActionRequired: true,
  };
}

/**
 * The public IP (the API's address) and the ingress: a load balancer frontend on that IP (Public)
 * or in the node subnet (Private), or none (Disabled).
 */
export const reconcileIngress: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (!stepReady(scope, CONDITIONS.DnsDelegated)) return {};
  const unsupported = ingressUnsupported(scope);
  if (unsupported) return recordStep(scope, CONDITIONS.IngressReady, unsupported);
  const { infra } = scope.deps;
  const ingress = await azureStep(
    scope,
    CONDITIONS.IngressReady,
    () => infra.ensureIngress(scope.infraSpec, { signal }),
    {
      recorded: (step) => {
        const addresses = recordedAddresses(scope);
        return addresses ? { step, ...addresses } : undefined;
      },
    },
  );
  scope.apiIp = ingress.ready?.apiIp;
  scope.ingressIp = ingress.ready?.ingressIp;
  if (scope.apiIp) scope.facts.azure.apiIP = scope.apiIp;
  if (scope.ingressIp) scope.facts.azure.ingressIP = scope.ingressIp;
  return ingress.phase;
};

// ---- the OIDC issuer --------------------------------------------------------------------------

/** Gets (or makes and stores) the key; failing to is a retryable step, like a storage failure. */
async function ensureSigningKey(scope: ClusterScope, signal: AbortSignal): Promise<string> {
  const owner = { uid: scope.cluster.metadata.uid ?? "", name: scope.infraSpec.ownerName };
  try {
    return await scope.deps.oidc.keys.ensure(owner, { signal });
  } catch (err) {
    if (signal.aborted) throw err;
    const message = `Could not read or store the service-account signing key: ${errorMessage(err)}`;
    scope.facts.steps[CONDITIONS.OidcIssuerReady] = {
      state: "failed",
      reason: "SigningKeyUnavailable",
      message,
      userActionRequired: false,
    };
    throw new RetryableStepError(`${CONDITIONS.OidcIssuerReady}: ${message}`);
  }
}

/**
 * The cluster's service-account signing key, stored before anything uses it, then its discovery
 * document and JWKS published under the issuer URL. Publishing is trusted like an Azure step once
 * done (read again at its recheck), so a storage fault costs a ready cluster nothing until then.
 */
export const reconcileOidcIssuer: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (!stepReady(scope, CONDITIONS.ValidVersion)) return {};
  const { cluster, deps } = scope;
  const key = await ensureSigningKey(scope, signal);
  failpoint("cluster/after-signing-key-stored");
  scope.signingKey = key;
  const url = issuerURL(deps.oidc.issuerBaseURL, cluster);
  scope.facts.issuerURL = url;
  const published = await azureStep(
    scope,
    CONDITIONS.OidcIssuerReady,
    () => deps.oidc.documents.publish(issuerPath(cluster), issuerDocuments(url, key), { signal }),
    { recorded: (step) => (cluster.status?.issuerURL === url ? { step } : undefined), account: null },
  );
  return published.phase;
};

// ---- the HostedCluster ----------------------------------------------------------------------

/**
 * The etcd keys the HostedCluster carries next (etcd-encryption.ts), decided from what the cached
 * work records it carries and what HyperShift reported on it; undefined while the cache has not
 * caught up with this reconciler's own last write of the work.
 */
function etcdKeyPlan(scope: ClusterScope, current: ManifestWorkObject | undefined): KeyPlan | undefined {
  const uid = scope.cluster.metadata.uid ?? "";
  const wanted = wantedKey(scope.cluster)?.key;
  if (wanted && lagsBehind(current, scope.memory.worksWritten.get(uid))) return undefined;
  const name = scope.facts.names.hostedClusterName;
  const report = current ? hostedReport(feedbackOf(current, { kind: "HostedCluster", name })) : undefined;
  return planKeys(wanted, carriedKeys(current), report);
}

/** Applies the HostedCluster's work when it differs from this controller's last apply. */
export const applyWork: Phase<ClusterScope> = async ({ signal }, scope) => {
  const { cluster, facts, release, consumer, deps, signingKey } = scope;
  if (!stepReady(scope, CONDITIONS.IngressReady) || !release || !consumer) return {};
  // The key and URL alone: the HostedCluster need not wait for the documents to be published.
  if (!signingKey || !facts.issuerURL) return {};
  const current = clusterWork(scope);
  const keys = etcdKeyPlan(scope, current);
  // Not this generation's reconcile yet: observedGeneration stays, the retry finds the cache caught up.
  if (!keys)
    throw new RetryableStepError(
      "The cached HostedCluster work is behind this controller's last write of it",
    );
  facts.etcdEncryption = keys.condition;
  const desired = hostedClusterWork({
    cluster,
    names: facts.names,
    release,
    region: deps.region,
    consumer,
    oidc: { issuerURL: facts.issuerURL, signingKey },
    externalAuths: externalAuthsCarried(externalAuthsOf(scope)),
    etcdKeys: keys.keys,
  });
  scope.appliedWork = await deps.writer.applyIfChanged<ManifestWork>(ManifestWorkResource, desired, current, {
    signal,
  });
  if (!scope.appliedWork) return {};
  scope.memory.worksWritten.set(cluster.metadata.uid ?? "", writtenOf(scope.appliedWork));
  failpoint("cluster/after-work-applied");
  const work = `${consumer}/${facts.names.workName}`;
  scope.log.info("Applied the HostedCluster ManifestWork", { work });
  if (!current)
    await deps.events.record(cluster, {
      type: "Normal",
      reason: "HostedClusterCreated",
      message: `ManifestWork ${work} created`,
      signal,
    });
  return {};
};

function hostedClusterAvailable(scope: ClusterScope): StepState {
  const available = scope.facts.hosted?.conditions.find((c) => c.type === "Available");
  if (available?.status === "True")
    return {
      state: "ready",
      reason: "Available",
      message: available.message || "The HostedCluster is available",
    };
  return {
    state: "pending",
    reason: available ? `HostedCluster${available.reason}` : "WaitingForHostedCluster",
    message: available?.message || "Waiting for the HostedCluster to report its conditions",
  };
}

/** HyperShift's message, saying which etcd key it cannot use (the customer's vault, key and version). */
function refusalMessage(refused: Condition, report: HostedClusterReport): string {
  const message = refused.message || `HyperShift reports ${refused.type} False`;
  const key = report.kmsKeys?.active;
  if (refused.type !== "ValidAzureKMSConfig" || !key) return message;
  return `The etcd encryption key ${key.keyVaultName}/${key.keyName} version ${key.keyVersion} cannot be used: ${message}`;
}

/** The verdicts that must be True: ValidConfiguration, and ValidAzureKMSConfig for a customer's key. */
function verdictsOf(scope: ClusterScope, report: HostedClusterReport): Array<Condition | undefined> {
  return wantedKey(scope.cluster)
    ? [report.validConfiguration, report.validAzureKMSConfig]
    : [report.validConfiguration];
}

/**
 * HyperShift's verdict on the HostedCluster the agent applied (each condition about the generation
 * the agent read back): its reason and message when it refuses the configuration or cannot use
 * the customer's etcd key, which only the user can fix.
 */
function hostedClusterValid(scope: ClusterScope, report: HostedClusterReport): StepState {
  const verdicts = verdictsOf(scope, report);
  // A verdict on the HostedCluster before the work's last change is not about this spec.
  const applied = isReady(scope.facts.steps[CONDITIONS.HostedClusterApplied]);
  const about = (c: Condition | undefined): c is Condition =>
    applied &&
    c !== undefined &&
    report.generation !== undefined &&
    c.observedGeneration === report.generation;
  const refused = verdicts.find((c) => about(c) && c.status === "False");
  if (refused)
    return {
      state: "failed",
      reason: `HostedCluster${refused.reason || "InvalidConfiguration"}`,
      message: refusalMessage(refused, report),
      userActionRequired: true,
    };
  if (verdicts.every((c) => about(c) && c.status === "True"))
    return {
      state: "ready",
      reason: "AsExpected",
      message: "HyperShift accepts the HostedCluster's configuration",
    };
  return {
    state: "pending",
    reason: "WaitingForHyperShift",
    message: `Waiting for HyperShift to validate the HostedCluster${verdicts.length > 1 ? " and its etcd key" : ""}`,
  };
}

/**
 * Turns the work's status and the HostedCluster's feedback into steps. Runs whatever came before:
 * a work that exists is observed even while an earlier step holds (a bad version, a quota), and
 * nothing here waits on a watch that is not there (the work's status events bring us back).
 */
export const observeHostedCluster: Phase<ClusterScope> = (_ctx, scope) => {
  const { facts } = scope;
  const work = scope.appliedWork ?? clusterWork(scope);
  if (!work) return {};
  facts.steps[CONDITIONS.HostedClusterApplied] = workStep(work);
  const report = hostedReport(
    feedbackOf(work, { kind: "HostedCluster", name: facts.names.hostedClusterName }),
  );
  // The release was applied but HyperShift has not started on it yet: that is an upgrade too.
  const wanted = scope.release?.version;
  if (wanted && !report.updatingTo && report.completedVersion && report.completedVersion !== wanted)
    report.updatingTo = wanted;
  facts.hosted = report;
  facts.steps[CONDITIONS.HostedClusterValid] = hostedClusterValid(scope, report);
  facts.steps[CONDITIONS.HostedClusterAvailable] = hostedClusterAvailable(scope);
  return {};
};

/**
 * `api` (at the public IP) and `*.apps` (at the ingress, when there is one) A records once the
 * HostedCluster reports its endpoint.
 */
export const reconcileRecords: Phase<ClusterScope> = async ({ signal }, scope) => {
  const { facts, apiIp, ingressIp } = scope;
  if (!stepReady(scope, CONDITIONS.IngressReady)) return {};
  if (!facts.hosted?.endpoint || !apiIp) {
    facts.steps[CONDITIONS.DnsRecordsReady] = {
      state: "pending",
      reason: "WaitingForEndpoint",
      message: "The api and *.apps records are written once the HostedCluster reports its endpoint",
    };
    return {};
  }
  // Records found ready are trusted like the other steps, for the addresses they point at.
  const records = await azureStep(
    scope,
    CONDITIONS.DnsRecordsReady,
    async () => ({
      ...(await scope.deps.infra.ensureRecords(scope.infraSpec, { api: apiIp, apps: ingressIp }, { signal })),
      apiIp,
      ingressIp,
    }),
    {
      recorded: (step) => {
        const addresses = recordedAddresses(scope);
        return addresses ? { step, apiIp: addresses.apiIp, ingressIp: addresses.ingressIp } : undefined;
      },
      stillHolds: (result) => result.apiIp === apiIp && result.ingressIp === ingressIp,
    },
  );
  return records.phase;
};

/** Every phase of a cluster that is not paused, in order. */
export const CLUSTER_PHASES: readonly Phase<ClusterScope>[] = [
  place,
  resolveRelease,
  reconcileResourceGroup,
  reconcileDnsZone,
  reconcileDelegation,
  reconcileIngress,
  reconcileOidcIssuer,
  applyWork,
  observeHostedCluster,
  reconcileRecords,
];

/** A paused cluster changes nothing: it is only observed. */
export const PAUSED_PHASES: readonly Phase<ClusterScope>[] = [observeHostedCluster];
