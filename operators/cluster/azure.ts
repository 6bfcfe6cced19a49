/**
 * ClusterInfrastructure on the Azure layer (../azure): each step calls the idempotent, owner-tagged
 * ensure or delete and turns its outcome, or the classified error, into a StepState. User errors
 * keep ARM's code as the reason and its message, so the condition tells the user what to fix.
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
import type { ClusterInfraSpec, ClusterInfrastructure, InfraResult, ParentZone } from "./infrastructure.ts";
import type { StepState } from "../hcp/steps.ts";

/** The A records every cluster gets, pointing at its ingress address. */
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

/** Runs one Azure call and says how the step stands. */
async function step<T>(
  what: string,
  run: () => Promise<Outcome<T>>,
): Promise<{ step: StepState; value?: T }> {
  try {
    const outcome = await run();
    if (!outcome.done)
      return { step: { state: "pending", reason: "InProgress", message: `${what}: ${outcome.reason}` } };
    return {
      step: { state: "ready", message: `${what} ${outcome.changed ? "created or updated" : "as expected"}` },
      value: outcome.value,
    };
  } catch (err) {
    return { step: failed(err) };
  }
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

  /** The region's parent zone and its group: the service's own, created once (local regions, tests). */
  async ensureParentZone(location = "eastus"): Promise<void> {
    const { subscriptionId, resourceGroup, name } = this.#parent;
    await ensureResourceGroup(this.#azure, {
      subscriptionId,
      name: resourceGroup,
      location,
      owner: SERVICE_OWNER,
    });
    await ensureDnsZone(this.#azure, { subscriptionId, resourceGroup, zoneName: name, owner: SERVICE_OWNER });
  }

  async ensureResourceGroup(spec: ClusterInfraSpec): Promise<InfraResult> {
    return step(`Resource group ${spec.managedResourceGroup}`, () =>
      ensureResourceGroup(this.#azure, {
        subscriptionId: spec.subscriptionId,
        name: spec.managedResourceGroup,
        location: spec.location,
        owner: this.#owner(spec),
      }),
    );
  }

  async ensureDnsZone(spec: ClusterInfraSpec): Promise<InfraResult & { nameServers?: string[] }> {
    const r = await step(`DNS zone ${spec.zoneName}`, () =>
      ensureDnsZone(this.#azure, { ...this.#rg(spec), zoneName: spec.zoneName }),
    );
    return { step: r.step, nameServers: r.value?.nameServers };
  }

  async ensureDelegation(spec: ClusterInfraSpec, nameServers: string[]): Promise<InfraResult> {
    return step(`NS delegation of ${spec.zoneName} in ${this.#parent.name}`, () =>
      ensureNsDelegation(this.#azure, {
        subscriptionId: this.#parent.subscriptionId,
        resourceGroup: this.#parent.resourceGroup,
        parentZone: this.#parent.name,
        childLabel: spec.delegationLabel,
        nameServers,
        owner: this.#owner(spec),
      }),
    );
  }

  async ensureIngress(spec: ClusterInfraSpec): Promise<InfraResult> {
    const common = { ...this.#rg(spec), location: spec.location };
    const ip = await step(`Public IP ${spec.ingressName}-pip`, () =>
      ensurePublicIp(this.#azure, { ...common, name: `${spec.ingressName}-pip` }),
    );
    if (ip.step.state !== "ready" || !ip.value) return { step: ip.step };
    const publicIpId = ip.value.id;
    const lb = await step(`Load balancer ${spec.ingressName}-lb`, () =>
      ensureLoadBalancer(this.#azure, { ...common, name: `${spec.ingressName}-lb`, publicIpId }),
    );
    if (lb.step.state !== "ready") return { step: lb.step };
    return {
      step: { state: "ready", message: `Ingress at ${ip.value.ipAddress} through ${spec.ingressName}-lb` },
      ingressIp: ip.value.ipAddress,
    };
  }

  async ensureRecords(spec: ClusterInfraSpec, ip: string): Promise<InfraResult> {
    for (const name of CLUSTER_RECORDS) {
      const r = await step(`A record ${name}.${spec.zoneName}`, async () =>
        ensureARecord(this.#azure, { ...this.#rg(spec), zoneName: spec.zoneName, name, ipv4Addresses: [ip] }),
      );
      if (r.step.state !== "ready") return { step: r.step };
    }
    return { step: { state: "ready", message: `${CLUSTER_RECORDS.join(" and ")} point at ${ip}` } };
  }

  async deleteAll(spec: ClusterInfraSpec): Promise<InfraResult> {
    const rg = this.#rg(spec);
    const deletions: Array<[string, () => Promise<Outcome<DeleteResult>>]> = [
      ...CLUSTER_RECORDS.map(
        (name) =>
          [
            `A record ${name}`,
            () => deleteARecord(this.#azure, { ...rg, zoneName: spec.zoneName, name }),
          ] as [string, () => Promise<Outcome<DeleteResult>>],
      ),
      [
        `Load balancer ${spec.ingressName}-lb`,
        () => deleteLoadBalancer(this.#azure, { ...rg, name: `${spec.ingressName}-lb` }),
      ],
      [
        `Public IP ${spec.ingressName}-pip`,
        () => deletePublicIp(this.#azure, { ...rg, name: `${spec.ingressName}-pip` }),
      ],
      [
        `NS delegation ${spec.delegationLabel}`,
        () =>
          deleteNsDelegation(this.#azure, {
            subscriptionId: this.#parent.subscriptionId,
            resourceGroup: this.#parent.resourceGroup,
            parentZone: this.#parent.name,
            childLabel: spec.delegationLabel,
            owner: this.#owner(spec),
          }),
      ],
      [`DNS zone ${spec.zoneName}`, () => deleteDnsZone(this.#azure, { ...rg, zoneName: spec.zoneName })],
      [
        `Resource group ${spec.managedResourceGroup}`,
        () =>
          deleteResourceGroup(this.#azure, {
            subscriptionId: spec.subscriptionId,
            name: spec.managedResourceGroup,
            owner: this.#owner(spec),
          }),
      ],
    ];
    for (const [what, run] of deletions) {
      const r = await step(`Deleting ${what}`, run);
      if (r.step.state !== "ready") return { step: r.step };
    }
    return { step: { state: "ready", message: "Every Azure resource of the cluster is gone" } };
  }
}
