/**
 * The phases of an HcpCluster reconcile, in the order they run: place, resolve the release, the
 * Azure resources (azure-phases.ts: resource group, DNS zone, NS delegation, ingress), the OIDC issuer (signing
 * key, published documents), the HostedCluster work, observing the HostedCluster through the
 * work's feedback, and the DNS records. Each phase records its step in `scope.facts` and returns
 * when to look again; a phase whose input is not ready yet (an earlier step) does nothing, and its
 * condition keeps saying why. Every phase reads the world before it writes, so a crash at any line
 * and a restart converge.
 */
import { createHash } from "node:crypto";
import { EXTERNAL_AUTHS_ANNOTATION, originalUid, type ManagementCluster } from "../api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork, type ManifestWorkObject } from "../api/work/v1.ts";
import {
  appliedSigningKeyId,
  feedbackOf,
  hostedReport,
  type HostedClusterReport,
} from "../api/v1alpha1/feedback.ts";
import { externalAuthsCarried } from "../hcp/external-auths.ts";
import { MANAGEMENT_CLUSTER_INDEX } from "../hcp/indexes.ts";
import { isReady, workStep, type StepState } from "../hcp/steps.ts";
import type { Condition } from "../runtime/conditions.ts";
import { errorMessage } from "../runtime/errors.ts";
import { failpoint } from "../runtime/failpoints.ts";
import { lowestNonZero, type Phase } from "../runtime/phases.ts";
import {
  reconcileDelegation,
  reconcileDnsZone,
  reconcileIngress,
  reconcileRecords,
  reconcileResourceGroup,
} from "./azure-phases.ts";
import { azureStep, recordStep, RetryableStepError, stepReady } from "./azure-step.ts";
import { backupReport, backupScheduleName, backupVerdict } from "./backup.ts";
import { observedRestore, restoreInput } from "./restore.ts";
import { SCHEDULE_KIND } from "../api/velero/v1/index.ts";
import {
  carriedKeys,
  ETCD_KEYS_ANNOTATION,
  lagsBehind,
  planKeys,
  wantedKey,
  writtenOf,
  type KeyPlan,
} from "./etcd-encryption.ts";
import { hostedClusterWork, SIGNING_KEY_SECRET_NAME } from "./hostedcluster.ts";
import type { InfraResult } from "./infrastructure.ts";
import { issuerDocuments, issuerPath, issuerURL } from "./oidc.ts";
import { keyId, nextRetirementInMs, publishedJwks, type SigningKeyring } from "./signing-keyring.ts";
import { place as choosePlacement } from "./placement.ts";
import { confirmRestoredClusterWork, keepRestoredSteps } from "./restored-work.ts";
import { clusterWork, externalAuthsOf, templateRevision, type ClusterScope } from "./scope.ts";
import {
  inputsDigest,
  templateAnnotations,
  templateHold,
  workRevisionOf,
  workTemplateStatus,
} from "./work-template.ts";
import { CONDITIONS } from "./status.ts";
import { endOfLifeCondition, resolveVersion } from "./version.ts";

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

// ---- the OIDC issuer --------------------------------------------------------------------------

/** Gets (or makes and stores) the keyring; failing to is a retryable step, like a storage failure. */
async function ensureSigningKey(scope: ClusterScope, signal: AbortSignal): Promise<SigningKeyring> {
  const owner = { uid: originalUid(scope.cluster), name: scope.infraSpec.ownerName };
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
 * document and JWKS published under the issuer URL. The JWKS holds every key of the keyring that
 * must verify now (a rotation's next and retired keys too); the HostedCluster gets only the active
 * key. Publishing is trusted like an Azure step once done (read again at its recheck), so a
 * storage fault costs a ready cluster nothing until then; a JWKS that differs from the one
 * trusted is published at once, and a retired key leaves it when its verify-until instant passes.
 */
export const reconcileOidcIssuer: Phase<ClusterScope> = async ({ signal }, scope) => {
  if (!stepReady(scope, CONDITIONS.ValidVersion)) return {};
  const { cluster, deps, now } = scope;
  const ring = await ensureSigningKey(scope, signal);
  failpoint("cluster/after-signing-key-stored");
  scope.signingKey = ring.active;
  const url = issuerURL(deps.oidc.issuerBaseURL, cluster);
  scope.facts.issuerURL = url;
  const docs = issuerDocuments(url, ring, now);
  // A digest, not the JWKS: the trusted results of 10,000 clusters are held in memory.
  const jwksDigest = createHash("sha256").update(docs.jwks).digest("base64url");
  const published = await azureStep<InfraResult & { jwksDigest?: string }>(
    scope,
    CONDITIONS.OidcIssuerReady,
    async ({ createFirst }) => ({
      ...(await deps.oidc.documents.publish(issuerPath(cluster), docs, { signal, createFirst })),
      jwksDigest,
    }),
    {
      // A status written before a restart records no JWKS: trusted for a keyring of one key only.
      recorded: (step) => (cluster.status?.issuerURL === url ? { step } : undefined),
      stillHolds: (result) =>
        result.jwksDigest === undefined
          ? !ring.next && ring.retired.length === 0
          : result.jwksDigest === jwksDigest,
      account: null,
    },
  );
  // The key IDs for the status: what the service holds active and, once published, what verifies.
  scope.facts.signingKeys = {
    activeKeyId: keyId(ring.active),
    ...(stepReady(scope, CONDITIONS.OidcIssuerReady)
      ? { publishedKeyIds: publishedJwks(ring, now).map((k) => String(k.kid)) }
      : {}),
  };
  const retirementMs = nextRetirementInMs(ring, now);
  if (retirementMs === undefined) return published.phase;
  return { ...published.phase, requeueAfterMs: lowestNonZero(published.phase.requeueAfterMs, retirementMs) };
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

/** What the work is built from besides the template (work-template.ts WorkInputs), as a digest. */
function workInputsDigest(scope: ClusterScope, annotations: Record<string, string>): string {
  const { cluster, release, consumer, signingKey } = scope;
  return inputsDigest({
    generation: cluster.metadata.generation ?? 0,
    release: { version: release?.version ?? "", image: release?.image ?? "" },
    consumer: consumer ?? "",
    signingKeyId: signingKey ? keyId(signingKey) : "",
    externalAuths: annotations[EXTERNAL_AUTHS_ANNOTATION] ?? "",
    etcdKeys: annotations[ETCD_KEYS_ANNOTATION] ?? "",
    restore: restoreInput(cluster),
  });
}

/**
 * The desired work stamped with the template revision and its inputs' digest, or undefined when
 * it is held: built from an older template while its cluster did not change (work-template.ts).
 */
function stampTemplate(
  scope: ClusterScope,
  desired: ManifestWork,
  current: ManifestWorkObject | undefined,
): ManifestWork | undefined {
  const revision = templateRevision(scope);
  const annotations = desired.metadata.annotations ?? {};
  const digest = workInputsDigest(scope, annotations);
  const signingKeyId = scope.signingKey ? keyId(scope.signingKey) : "";
  const decision = templateHold({ stored: current, cluster: scope.cluster, digest, revision, signingKeyId });
  if (!decision.write) {
    scope.facts.workTemplate = workTemplateStatus(decision.workRevision, revision);
    return undefined;
  }
  if (current) scope.facts.workTemplate = workTemplateStatus(workRevisionOf(current), revision);
  const stamped = { ...annotations, ...templateAnnotations(revision, digest) };
  return { ...desired, metadata: { ...desired.metadata, annotations: stamped } };
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
  const stamped = stampTemplate(scope, desired, current);
  if (!stamped) return {};
  scope.appliedWork = await deps.writer.applyIfChanged<ManifestWork>(ManifestWorkResource, stamped, current, {
    signal,
  });
  if (!scope.appliedWork) return {};
  facts.workTemplate = workTemplateStatus(workRevisionOf(scope.appliedWork), templateRevision(scope));
  scope.memory.worksWritten.set(cluster.metadata.uid ?? "", writtenOf(scope.appliedWork));
  failpoint("cluster/after-work-applied");
  const work = `${consumer}/${facts.names.workName}`;
  // No event for the work's creation: HostedClusterApplied shows it, and an install is told by its
  // failures and its end (runtime/events.ts TransitionPolicy.install).
  scope.log.info("Applied the HostedCluster ManifestWork", { work, created: !current });
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

/** The HostedCluster's steps from its work and HyperShift's report, unless a restored cluster keeps its own. */
function recordHostedSteps(scope: ClusterScope, work: ManifestWorkObject, report: HostedClusterReport): void {
  if (keepRestoredSteps(scope, work)) return;
  scope.facts.steps[CONDITIONS.HostedClusterApplied] = workStep(work);
  scope.facts.steps[CONDITIONS.HostedClusterValid] = hostedClusterValid(scope, report);
  scope.facts.steps[CONDITIONS.HostedClusterAvailable] = hostedClusterAvailable(scope);
}

/**
 * An install's first version is told with its end of life in the same write (with Ready), not in
 * the write after; later versions are planned from the status (version.ts resolveVersion).
 */
function firstVersionEndOfLife(scope: ClusterScope, completed: string | undefined): void {
  if (!completed || scope.cluster.status?.version || !scope.plan) return;
  const condition = endOfLifeCondition(scope.deps.releases(), completed, scope.plan);
  if (condition) scope.facts.versionEndOfLife = condition;
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
  const report = hostedReport(
    feedbackOf(work, { kind: "HostedCluster", name: facts.names.hostedClusterName }),
  );
  // The release was applied but HyperShift has not started on it yet: that is an upgrade too.
  const wanted = scope.release?.version;
  if (wanted && !report.updatingTo && report.completedVersion && report.completedVersion !== wanted)
    report.updatingTo = wanted;
  facts.hosted = report;
  firstVersionEndOfLife(scope, report.completedVersion);
  const appliedKeyId = appliedSigningKeyId(
    feedbackOf(work, { kind: "Secret", name: SIGNING_KEY_SECRET_NAME }),
  );
  if (appliedKeyId) facts.signingKeys = { ...facts.signingKeys, appliedKeyId };
  recordHostedSteps(scope, work, report);
  const schedule = { kind: SCHEDULE_KIND, name: backupScheduleName(facts.names) };
  const backup = backupVerdict(scope.cluster, backupReport(feedbackOf(work, schedule)), scope.now);
  facts.backup = backup;
  facts.restore = observedRestore(scope.cluster, facts.names, work);
  // No watch tells when a backup becomes overdue: look again then.
  const overdueIn = backup.overdueAt === undefined ? 0 : backup.overdueAt - scope.now + 1_000;
  return overdueIn > 0 ? { requeueAfterMs: overdueIn } : {};
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
  confirmRestoredClusterWork,
];

/** A paused cluster changes nothing: it is only observed. */
export const PAUSED_PHASES: readonly Phase<ClusterScope>[] = [observeHostedCluster];
