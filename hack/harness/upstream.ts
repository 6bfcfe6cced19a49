/**
 * Upstream CRDs taken from their Go modules through the module proxy, pinned here. The module
 * cache keeps them, so only the first run downloads. One upstream the proxy lacks has a stand-in.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);

/** The newest HyperShift release the module proxy and the checksum database both serve here. */
export const HYPERSHIFT_MODULE = "github.com/openshift/hypershift@v0.1.75";
export const OCM_API_MODULE = "open-cluster-management.io/api@v1.2.0";
/** Velero, which runs on every management cluster and backs up each hosted control plane (docs/backups.md of ARO HCP). */
export const VELERO_MODULE = "github.com/vmware-tanzu/velero@v1.18.3";

const moduleDirs = new Map<string, Promise<string>>();

/** Downloads a module (if needed) and returns its directory in the module cache. */
export function goModuleDir(moduleAtVersion: string): Promise<string> {
  let dir = moduleDirs.get(moduleAtVersion);
  if (!dir) {
    dir = (async () => {
      // Run outside any go.mod and without the caller's GOFLAGS so the download is module-mode only.
      const { stdout } = await exec("go", ["mod", "download", "-json", moduleAtVersion], {
        env: { ...process.env, GOFLAGS: "" },
        cwd: "/",
        maxBuffer: 1 << 20,
      });
      const info = JSON.parse(stdout) as { Dir?: string; Error?: string };
      if (!info.Dir) throw new Error(`go mod download ${moduleAtVersion}: ${info.Error ?? "no directory"}`);
      return info.Dir;
    })();
    moduleDirs.set(moduleAtVersion, dir);
  }
  return dir;
}

export interface UpstreamCrdPaths {
  hostedClusters: string;
  nodePools: string;
  /** HyperShift's certificates.hypershift.openshift.io: CSR approvals and revocation requests. */
  csrApprovals: string;
  revocationRequests: string;
  manifestWorks: string;
  appliedManifestWorks: string;
  /** Velero's Schedule, Backup, Restore and BackupStorageLocation. */
  velero: string[];
}

export async function upstreamCrdPaths(): Promise<UpstreamCrdPaths> {
  const [hypershift, ocm, velero] = await Promise.all([
    goModuleDir(HYPERSHIFT_MODULE),
    goModuleDir(OCM_API_MODULE),
    goModuleDir(VELERO_MODULE),
  ]);
  // The "Default" feature-set CRDs, the ones a HyperShift install serves.
  const hsDir = join(hypershift, "cmd/install/assets/hypershift-operator/zz_generated.crd-manifests");
  const certDir = join(hypershift, "cmd/install/assets/hypershift-operator");
  return {
    hostedClusters: join(hsDir, "hostedclusters-Hypershift-Default.crd.yaml"),
    nodePools: join(hsDir, "nodepools-Default.crd.yaml"),
    // certificates.hypershift.openshift.io/v1alpha1 (zz_generated has an unrelated hypershift.openshift.io one).
    csrApprovals: join(
      certDir,
      "certificates.hypershift.openshift.io_certificatesigningrequestapprovals.yaml",
    ),
    revocationRequests: join(
      certDir,
      "certificates.hypershift.openshift.io_certificaterevocationrequests.yaml",
    ),
    manifestWorks: join(ocm, "work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml"),
    appliedManifestWorks: join(
      ocm,
      "work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml",
    ),
    velero: ["schedules", "backups", "restores", "backupstoragelocations"].map((plural) =>
      join(velero, `config/crd/v1/bases/velero.io_${plural}.yaml`),
    ),
  };
}

/**
 * Azure Container Networking's PodNetwork and PodNetworkInstance: a stand-in written here, since
 * their module is not on the module proxy (see the file's header).
 */
export const ACN_STAND_IN_CRDS = fileURLToPath(
  new URL("./stand-in-crds/multitenancy.acn.azure.com.yaml", import.meta.url),
);

/**
 * What a management cluster serves: HyperShift's HostedCluster, NodePool and certificate CRs
 * (break-glass approvals and revocations), OCM's AppliedManifestWork, the Swift networking
 * kinds a cluster with a VNet integration subnet carries (ACN_STAND_IN_CRDS), and Velero's kinds
 * (each cluster's backup Schedule).
 */
export async function managementClusterCrds(): Promise<string[]> {
  const p = await upstreamCrdPaths();
  return [
    p.hostedClusters,
    p.nodePools,
    p.csrApprovals,
    p.revocationRequests,
    p.appliedManifestWorks,
    ACN_STAND_IN_CRDS,
    ...p.velero,
  ];
}

/**
 * The Prometheus operator's root module: the newest version the proxy lists for it (later
 * releases moved the CRDs' module path). Argo CD: the newest release whose go.mod the machine's Go
 * (1.26) accepts; v3.6 asks for Go 1.27.
 */
export const PROMETHEUS_OPERATOR_MODULE = "github.com/prometheus-operator/prometheus-operator@v0.85.0";
export const ARGO_CD_MODULE = "github.com/argoproj/argo-cd/v3@v3.5.7";

/**
 * What a deployed region's clusters serve besides the service's own CRDs: the Prometheus
 * operator's ServiceMonitor and PrometheusRule, Argo CD's Application, ApplicationSet and
 * AppProject. The deploy test validates config/ against them.
 */
export async function deploymentCrds(): Promise<string[]> {
  const [prometheus, argo] = await Promise.all([
    goModuleDir(PROMETHEUS_OPERATOR_MODULE),
    goModuleDir(ARGO_CD_MODULE),
  ]);
  const monitoring = join(prometheus, "example/prometheus-operator-crd");
  const argoCrds = join(argo, "manifests/crds");
  return [
    join(monitoring, "monitoring.coreos.com_servicemonitors.yaml"),
    join(monitoring, "monitoring.coreos.com_prometheusrules.yaml"),
    join(argoCrds, "application-crd.yaml"),
    join(argoCrds, "applicationset-crd.yaml"),
    join(argoCrds, "appproject-crd.yaml"),
  ];
}
