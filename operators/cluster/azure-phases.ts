/**
 * The Azure phases of an HcpCluster reconcile, in order: the resource group, the DNS zone, its NS
 * delegation in the region's parent zone, the public IP and ingress; and last, once the
 * HostedCluster reports its endpoint, the `api` and `*.apps` records. Each is an azureStep
 * (azure-step.ts): trusted while found ready, read again at its recheck.
 */
import { INGRESS_DISABLED_SINCE } from "../api/v1alpha1/index.ts";
import type { StepState } from "../hcp/steps.ts";
import { failpoint } from "../runtime/failpoints.ts";
import type { Phase } from "../runtime/phases.ts";
import { azureStep, recordStep, stepReady } from "./azure-step.ts";
import { runsWithoutIngress } from "./networking.ts";
import type { ClusterScope } from "./scope.ts";
import { CONDITIONS } from "./status.ts";

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
    ({ createFirst }) => infra.ensureDnsZone(scope.infraSpec, { signal, createFirst }),
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
      ({ createFirst }) => infra.ensureDelegation(scope.infraSpec, nameServers, { signal, createFirst }),
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

/**
 * `api` (at the public IP) and `*.apps` (at the ingress, when there is one) A records once the
 * HostedCluster reports its endpoint.
 */
export const reconcileRecords: Phase<ClusterScope> = async ({ signal }, scope) => {
  const { facts, apiIp, ingressIp } = scope;
  if (!stepReady(scope, CONDITIONS.IngressReady)) return {};
  if (!facts.hosted?.endpoint || !apiIp) {
    // A restored cluster's step as the backup recorded it stays until its work is reported.
    facts.steps[CONDITIONS.DnsRecordsReady] ??= {
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
    async ({ createFirst }) => ({
      ...(await scope.deps.infra.ensureRecords(
        scope.infraSpec,
        { api: apiIp, apps: ingressIp },
        { signal, createFirst },
      )),
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
