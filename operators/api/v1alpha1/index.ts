/** The hcp.aro.dev/v1alpha1 API: HcpCluster, NodePool, ExternalAuth, ManagementCluster, BreakglassCredential. */
export * from "./meta.ts";
export * from "./hcpcluster.ts";
export * from "./nodepool.ts";
export * from "./externalauth.ts";
export * from "./managementcluster.ts";
export * from "./breakglasscredential.ts";
export * from "./accesssession.ts";
export * from "./steps.ts";
export * from "./labels.ts";
export * from "./clusternames.ts";
export * from "./feedback.ts";
export * from "./operation.ts";
export * from "./operation-state.ts";
export * from "./arm.ts";
export * from "./maintenance.ts";
export * from "./rollout.ts";
