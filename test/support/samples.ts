/** The repository's sample CRs (config/samples), loaded as typed objects for tests. */
import { readFileSync } from "node:fs";
import { load } from "js-yaml";
import type {
  ExternalAuth,
  HcpCluster,
  ManagementCluster,
  NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import type { RegionSettings } from "../../operators/api/v1alpha1/clusternames.ts";
import type { Condition } from "../../operators/api/meta/v1.ts";

const samplesDir = new URL("../../config/samples/", import.meta.url);

function sample<T>(file: string): T {
  return load(readFileSync(new URL(file, samplesDir), "utf8")) as T;
}

export const sampleCluster = (): HcpCluster => sample<HcpCluster>("hcpcluster.yaml");
export const sampleFixedPool = (): NodePool => sample<NodePool>("nodepool-fixed.yaml");
export const sampleAutoscalingPool = (): NodePool => sample<NodePool>("nodepool-autoscaling.yaml");
export const sampleExternalAuth = (): ExternalAuth => sample<ExternalAuth>("externalauth.yaml");
export const sampleManagementCluster = (name: string): ManagementCluster =>
  sample<ManagementCluster>(`managementcluster-${name}.yaml`);

/** The region settings the controllers' unit tests run with: the zone the sample cluster names. */
export const sampleRegion = (): RegionSettings => ({
  environment: "t",
  baseDomain: "hcp.example.com",
  managedIdentitiesKeyVault: "kv",
  pullSecret: "{}",
});

/** A condition as a controller writes it, last changed at `lastTransitionTime`. */
export const conditionSince = (
  type: string,
  status: string,
  reason: string,
  lastTransitionTime: string,
): Condition => ({ type, status: status as Condition["status"], reason, message: "", lastTransitionTime });

/** A ManifestWork's Applied condition as the agent reports it, about `observedGeneration`. */
export const workAppliedCondition = (observedGeneration: number, lastTransitionTime: string): Condition => ({
  type: "Applied",
  status: "True",
  reason: "Applied",
  message: "",
  observedGeneration,
  lastTransitionTime,
});
