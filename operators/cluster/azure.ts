/**
 * ClusterInfrastructure on the Azure layer (../azure): each step calls the idempotent, owner-tagged
 * ensure or delete and turns its outcome, or the classified error, into a StepState. User errors
 * keep ARM's code as the reason and its message, so the condition tells the user what to fix. A
 * cancelled call is no StepState: its rejection (the signal's reason) passes through.
 */
import {
  AzureConflictError,
  AzureRetryableError,
  AzureUserError,
  deleteARecord,
  deleteDnsZone,
  deleteLoadBalancer,
  deleteNsDelegation,
  deletePublicIp,
  deleteResourceGroup,
  ensureARecord,
  ensureDnsZone,
  ensureLoadBalancer,
  ensureNsDelegation,
  ensurePublicIp,
  ensureResourceGroup,
  type AzureClients,
  type DeleteResult,
  type Outcome,
  type Owner,
} from "../azure/index.ts";
import type { StepState } from "../hcp/steps.ts";
import { failpoint, type Failpoint } from "../runtime/failpoints.ts";
import type {
  ClusterInfraSpec,
  ClusterInfrastructure,
  InfraOptions,
  InfraResult,
  ParentZone,
  RecordAddresses,
} from "./infrastructure.ts";

/**
 * The A records a cluster gets: `api` at the public IP, `*.apps` at the ingress (public or
 * private); a cluster without an ingress has no `*.apps`.
 */
export const CLUSTER_RECORDS = ["api", "*.apps"] as const;

/** The owner of the region's own resources (the parent zone and its group). */
const SERVICE_OWNER: Owner = { id: "hcp-service", cluster: "region" };

function failed(err: unknown): StepState {
  if (err instanceof AzureUserError)
    return { state: "failed", reason: err.code, message: err.message, userActionRequired: true };
  if (err instanceof AzureConflictError)
    return { state: "pending", reason: "Conflict", message: `${err.message}; trying again` };
  if (err instanceof AzureRetryableError)
    return {
      state: "failed",
      reason: err.code || "AzureUnavailable",
      message: err.message,
      userActionRequired: false,
    };
  throw err;
}

/** Runs one Azure call and says how the step stands; `written` is reached when it wrote. */
async function step<T>(
  what: string,
  run: () => Promise<Outcome<T>>,
  written?: Failpoint,
): Promise<{ step: StepState; value?: T }> {
  let outcome: Outcome<T>;
  try {
    outcome = await run();
  } catch (err) {
    return { step: failed(err) };
  }
  if (!outcome.done) {
    const { reason, retryAfterMs } = outcome;
    return { step: { state: "pending", reason: "InProgress", message: `${what}: ${reason}`, retryAfterMs } };
  }
  if (written && outcome.changed) failpoint(written);
  // Whether this call wrote or found the resource as wanted, the condition says the same: words
  // that told the two apart made the first recheck rewrite every cluster's status.
  return {
    step: { state: "ready", message: `${what} as expected` },
    value: outcome.value,
  };
}

type Deletion = [what: string, run: () => Promise<Outcome<DeleteResult>>];

async function deleting(what: string, run: Deletion[1]): Promise<{ step: StepState; value?: DeleteResult }> {
  const r = await step(`Deleting ${what}`, run);
  if (r.value === "deleted") failpoint("cluster/after-azure-resource-deleted");
  return r;
}

export class AzureClusterInfrastructure implements ClusterInfrastructure {
  readonly #azure: AzureClients;
  readonly #parent: ParentZone;

  constructor(azure: AzureClients, parentZone: ParentZone) {
    this.#azure = azure;
    this.#parent = parentZone;
  }

  #owner(spec: ClusterInfraSpec): Owner {
    return { id: spec.owner, cluster: spec.ownerName };
  }

  #rg(spec: ClusterInfraSpec) {
    return {
      subscriptionId: spec.subscriptionId,
      resourceGroup: spec.managedResourceGroup,
      owner: this.#owner(spec),
    };
  }

  /** The cluster's managed resource group. */
  #group(spec: ClusterInfraSpec) {
    return { subscriptionId: spec.subscriptionId, name: spec.managedResourceGroup, owner: this.#owner(spec) };
  }

  /** The cluster's NS record in the region's parent zone. */
  #delegation(spec: ClusterInfraSpec) {
    return {
      subscriptionId: this.#parent.subscriptionId,
      resourceGroup: this.#parent.resourceGroup,
      parentZone: this.#parent.name,
      childLabel: spec.delegationLabel,
      owner: this.#owner(spec),
    };
  }

  /** The region's parent zone and its group: the service's own, created once (local regions, tests). */
  async ensureParentZone(location = "eastus", opts: InfraOptions = {}): Promise<void> {
    const { subscriptionId, resourceGroup, name } = this.#parent;
    const group = { subscriptionId, name: resourceGroup, location, owner: SERVICE_OWNER };
    await ensureResourceGroup(this.#azure, group, opts);
    const zone = { subscriptionId, resourceGroup, zoneName: name, owner: SERVICE_OWNER };
    await ensureDnsZone(this.#azure, zone, opts);
  }

  async ensureResourceGroup(spec: ClusterInfraSpec, opts: InfraOptions = {}): Promise<InfraResult> {
    return step(
      `Resource group ${spec.managedResourceGroup}`,
      () => ensureResourceGroup(this.#azure, { ...this.#group(spec), location: spec.location }, opts),
      "cluster/after-resource-group-created",
    );
  }

  async ensureDnsZone(
    spec: ClusterInfraSpec,
    opts: InfraOptions = {},
  ): Promise<InfraResult & { nameServers?: string[] }> {
    const r = await step(
      `DNS zone ${spec.zoneName}`,
      () => ensureDnsZone(this.#azure, { ...this.#rg(spec), zoneName: spec.zoneName }, opts),
      "cluster/after-dns-zone-created",
    );
    return { step: r.step, nameServers: r.value?.nameServers };
  }

  async ensureDelegation(
    spec: ClusterInfraSpec,
    nameServers: string[],
    opts: InfraOptions = {},
  ): Promise<InfraResult> {
    return step(
      `NS delegation of ${spec.zoneName} in ${this.#parent.name}`,
      () => ensureNsDelegation(this.#azure, { ...this.#delegation(spec), nameServers }, opts),
      "cluster/after-delegation-created",
    );
  }

  /**
   * The public IP (the API's address), then the ingress's load balancer: its frontend on the public
   * IP (Public) or in the node subnet, where Azure gives it a private address (Private); no load
   * balancer at all when the ingress is Disabled.
   */
  async ensureIngress(spec: ClusterInfraSpec, opts: InfraOptions = {}): Promise<InfraResult> {
    const common = { ...this.#rg(spec), location: spec.location };
    const { publicIpName, ingress } = spec;
    const ip = await step(
      `Public IP ${publicIpName}`,
      () => ensurePublicIp(this.#azure, { ...common, name: publicIpName }, opts),
      "cluster/after-public-ip-created",
    );
    if (ip.step.state !== "ready" || !ip.value) return { step: ip.step };
    const apiIp = ip.value.ipAddress;
    if (ingress.type === "Disabled")
      return {
        step: { state: "ready", message: `No ingress (disabled); the API at ${apiIp} (${publicIpName})` },
        apiIp,
      };
    const lbName = `${spec.ingressName}-lb`;
    const frontend =
      ingress.type === "Private" ? { subnetId: ingress.subnetId } : { publicIpId: ip.value.id };
    const lb = await step(
      `Load balancer ${lbName}`,
      () => ensureLoadBalancer(this.#azure, { ...common, name: lbName, ...frontend }, opts),
      "cluster/after-load-balancer-created",
    );
    if (lb.step.state !== "ready" || !lb.value) return { step: lb.step };
    const privateIp = lb.value.privateIpAddress;
    if (ingress.type === "Public" || !privateIp)
      return {
        step: { state: "ready", message: `Ingress at ${apiIp} through ${lbName}` },
        apiIp,
        ingressIp: apiIp,
      };
    return {
      step: {
        state: "ready",
        message: `Ingress at ${privateIp} (private) through ${lbName}; the API at ${apiIp} (${publicIpName})`,
      },
      apiIp,
      ingressIp: privateIp,
    };
  }

  async ensureRecords(
    spec: ClusterInfraSpec,
    addresses: RecordAddresses,
    opts: InfraOptions = {},
  ): Promise<InfraResult> {
    const wanted: Array<[string, string]> = [["api", addresses.api]];
    if (addresses.apps) wanted.push(["*.apps", addresses.apps]);
    for (const [name, ip] of wanted) {
      const record = { ...this.#rg(spec), zoneName: spec.zoneName, name, ipv4Addresses: [ip] };
      const r = await step(
        `A record ${name}.${spec.zoneName}`,
        () => ensureARecord(this.#azure, record, opts),
        "cluster/after-record-created",
      );
      if (r.step.state !== "ready") return { step: r.step };
    }
    const message =
      addresses.apps === undefined
        ? `api points at ${addresses.api}; no *.apps without an ingress`
        : addresses.apps === addresses.api
          ? `${CLUSTER_RECORDS.join(" and ")} point at ${addresses.api}`
          : `api points at ${addresses.api}, *.apps at ${addresses.apps}`;
    return { step: { state: "ready", message } };
  }

  /**
   * The delegation first (a delegation left pointing at a deleted zone invites a takeover of the
   * name), then the managed resource group, which takes everything in it: one long-running
   * operation instead of one per resource. A group that is not ours (the user named an existing
   * one) stays, and what we made in it is deleted one by one.
   */
  async deleteAll(spec: ClusterInfraSpec, opts: InfraOptions = {}): Promise<InfraResult> {
    const delegation = await deleting(`NS delegation ${spec.delegationLabel}`, () =>
      deleteNsDelegation(this.#azure, this.#delegation(spec), opts),
    );
    if (delegation.step.state !== "ready") return { step: delegation.step };
    const group = await deleting(`Resource group ${spec.managedResourceGroup}`, () =>
      deleteResourceGroup(this.#azure, this.#group(spec), opts),
    );
    if (group.step.state !== "ready") return { step: group.step };
    if (group.value === "ownedByAnother") return this.#deleteContents(spec, opts);
    return { step: { state: "ready", message: "Every Azure resource of the cluster is gone" } };
  }

  /** Our resources in a group that is not ours, in order: what depends on something goes before it. */
  async #deleteContents(spec: ClusterInfraSpec, opts: InfraOptions): Promise<InfraResult> {
    for (const [what, run] of this.#contents(spec, opts)) {
      const r = await deleting(what, run);
      if (r.step.state !== "ready") return { step: r.step };
    }
    const message = `Every Azure resource of the cluster is gone; resource group ${spec.managedResourceGroup} is not the cluster's and stays`;
    return { step: { state: "ready", message } };
  }

  /** Every kind of ingress's resources (deleting one that was never made costs one call, no harm). */
  #contents(spec: ClusterInfraSpec, opts: InfraOptions): Deletion[] {
    const azure = this.#azure;
    const rg = this.#rg(spec);
    const { ingressName, publicIpName, zoneName } = spec;
    return [
      ...CLUSTER_RECORDS.map((name): Deletion => [
        `A record ${name}`,
        () => deleteARecord(azure, { ...rg, zoneName, name }, opts),
      ]),
      [
        `Load balancer ${ingressName}-lb`,
        () => deleteLoadBalancer(azure, { ...rg, name: `${ingressName}-lb` }, opts),
      ],
      [`Public IP ${publicIpName}`, () => deletePublicIp(azure, { ...rg, name: publicIpName }, opts)],
      [`DNS zone ${zoneName}`, () => deleteDnsZone(azure, { ...rg, zoneName }, opts)],
    ];
  }
}
