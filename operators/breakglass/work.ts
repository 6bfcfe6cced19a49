/**
 * What a BreakglassCredential sends to the management cluster and what comes back: the
 * certificate work of operators/hcp/csr-work.ts for the hosted control plane's customer
 * break-glass signer, named after the credential.
 */
import {
  BREAKGLASS_TTL_SECONDS,
  CUSTOMER_BREAK_GLASS,
  type BreakglassCredential,
  type HcpCluster,
  originalUid,
} from "../api/v1alpha1/index.ts";
import type { ManifestWork, ManifestWorkObject } from "../api/work/v1.ts";
import type { ClusterNames } from "../api/v1alpha1/clusternames.ts";
import { WORK_LABELS } from "../api/v1alpha1/labels.ts";
import { csrReport as reportOf, csrWork, type CsrReport } from "../hcp/csr-work.ts";

export type { CsrReport };

/** The CSR's (and its approval's) name: global on the management cluster, so the credential's uid. */
export function csrName(credential: BreakglassCredential): string {
  return `breakglass-${originalUid(credential)}`;
}

export function workName(credential: BreakglassCredential, names: ClusterNames): string {
  return `${names.clusterID}-bg-${originalUid(credential).slice(0, 8)}`;
}

export interface WorkInput {
  credential: BreakglassCredential;
  cluster: HcpCluster;
  names: ClusterNames;
  consumer: string;
  /** The PEM request to send (the client's, or the one made from the service's key). */
  request: string;
}

export function credentialWork({ credential, cluster, names, consumer, request }: WorkInput): ManifestWork {
  return csrWork({
    workName: workName(credential, names),
    csrName: csrName(credential),
    signerClass: CUSTOMER_BREAK_GLASS,
    expirationSeconds: credential.spec.expirationSeconds ?? BREAKGLASS_TTL_SECONDS.default,
    cluster,
    names,
    consumer,
    labels: { [WORK_LABELS.breakglass]: credential.metadata.uid ?? "" },
    request,
  });
}

export function csrReport(work: ManifestWorkObject | undefined, credential: BreakglassCredential): CsrReport {
  return reportOf(work, csrName(credential));
}
