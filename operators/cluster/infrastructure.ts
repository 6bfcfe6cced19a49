/**
 * What the cluster controller needs from Azure, one method per resource, each idempotent and
 * answering with a StepState: ready, still in progress (a long-running operation to look at again),
 * or failed (retryable, or needing the user). The implementation on the Azure SDKs is in
 * azure.ts; the controller sees only this.
 */
import type { StepState } from "../hcp/steps.ts";

/** Identifies the cluster's Azure resources and tags them as its own. */
export interface ClusterInfraSpec {
  /** The HcpCluster uid: the owner tag every resource carries. */
  owner: string;
  /** namespace/name, for humans reading tags. */
  ownerName: string;
  subscriptionId: string;
  location: string;
  managedResourceGroup: string;
  /** `<prefix>.<baseDomain>` */
  zoneName: string;
  /** The DNS prefix: the NS record's name in the parent zone. */
  delegationLabel: string;
  /** The ingress load balancer is `<ingressName>-lb`. */
  ingressName: string;
  /** The public IP: the API's address, and the ingress's when the ingress is Public. */
  publicIpName: string;
  ingress: IngressPlan;
}

/**
 * How the cluster's ingress is exposed: a load balancer frontend on the public IP (Public) or in
 * the node subnet (Private), or no load balancer at all (Disabled).
 */
export type IngressPlan = { type: "Public" } | { type: "Private"; subnetId: string } | { type: "Disabled" };

export interface ParentZone {
  subscriptionId: string;
  resourceGroup: string;
  /** The region's base domain, e.g. "hcp.example.com". */
  name: string;
}

export interface InfraResult {
  step: StepState;
  /** Set by ensureIngress once the public IP has an address: where the api record points. */
  apiIp?: string;
  /** Set by ensureIngress once the ingress has an address (none when Disabled): the *.apps record's. */
  ingressIp?: string;
}

/** Where the cluster's records point: `api` always, `*.apps` when there is an ingress. */
export interface RecordAddresses {
  api: string;
  apps?: string;
}

/**
 * Every method takes the reconcile's signal: aborting it abandons the calls in flight and the
 * waits between them, and the method rejects with the signal's reason (not a failed StepState).
 */
export interface InfraOptions {
  signal?: AbortSignal;
  /**
   * The step never showed ready, so what it makes is most likely missing: DNS zones and records are
   * created on condition of absence before any read, the OIDC documents written without one
   * (azure-step.ts StepCallHint).
   */
  createFirst?: boolean;
}

export interface ClusterInfrastructure {
  ensureResourceGroup(spec: ClusterInfraSpec, opts?: InfraOptions): Promise<InfraResult>;
  ensureDnsZone(
    spec: ClusterInfraSpec,
    opts?: InfraOptions,
  ): Promise<InfraResult & { nameServers?: string[] }>;
  ensureDelegation(spec: ClusterInfraSpec, nameServers: string[], opts?: InfraOptions): Promise<InfraResult>;
  /** The public IP and, unless the ingress is Disabled, the load balancer in front of the ingress. */
  ensureIngress(spec: ClusterInfraSpec, opts?: InfraOptions): Promise<InfraResult>;
  /** `api` and (with an ingress) `*.apps` A records in the cluster's zone. */
  ensureRecords(
    spec: ClusterInfraSpec,
    addresses: RecordAddresses,
    opts?: InfraOptions,
  ): Promise<InfraResult>;
  /**
   * Removes everything in reverse order. Ready when nothing of the cluster is left; pending while a
   * deletion runs; never touches a resource another owner tagged.
   */
  deleteAll(spec: ClusterInfraSpec, opts?: InfraOptions): Promise<InfraResult>;
}
