/**
 * HyperShift's HostedCluster and NodePool (`hypershift.openshift.io/v1beta1`), the subset this
 * project writes and reads. Mirrors the "Default" feature-set CRDs the management clusters serve,
 * taken from `github.com/openshift/hypershift@v0.1.75` (hack/harness/upstream.ts):
 * `cmd/install/assets/hypershift-operator/zz_generated.crd-manifests/{hostedclusters-Hypershift-Default,nodepools-Default}.crd.yaml`.
 * JSON names are HyperShift's; "default" marks fields the apiserver fills in, "immutable" those a
 * CEL rule freezes. Spec types cover what a creator sets (for ARO HCP, the Azure platform);
 * status types cover everything HyperShift reports that a client reads. Fields of other
 * platforms and the large OpenShift configuration blocks are left open (`unknown`).
 *
 * Facts that differ from newer HyperShift (see the API reference): the v0.1.75 CRD has no
 * `AzureBleuCloud`, no `Swift` private type, and refuses `autoScaling.min: 0` outside AWS.
 */
export * from "./meta.ts";
export * from "./hostedcluster.ts";
export * from "./azure.ts";
export * from "./hostedcluster-status.ts";
export * from "./nodepool.ts";
