/**
 * Crash points for crash-recovery tests, in the spirit of etcd's gofail: a process started with
 * HCP_FAILPOINTS="cluster/after-dns-zone" kills itself with SIGKILL when it reaches that point, so
 * a test can prove that a restart converges from exactly there. Unset in production: one lookup.
 *
 * Every point is listed here, so a chaos run can kill a process at each of them in turn. They sit
 * where a crash loses the most: after a write to Azure, the management cluster or the broker, and
 * before the status (or the next record) that would say it happened.
 */
export const FAILPOINTS = [
  // The cluster controller: each Azure resource written, before the status says so.
  "cluster/after-resource-group-created",
  "cluster/after-dns-zone",
  "cluster/after-dns-zone-created",
  "cluster/after-delegation-created",
  "cluster/after-public-ip-created",
  "cluster/after-load-balancer-created",
  "cluster/after-record-created",
  // The cluster's signing key stored, before its documents are published and the status says so.
  "cluster/after-signing-key-stored",
  "cluster/after-work-applied",
  // ... and deleting: works asked to go, an Azure resource gone, everything gone but the finalizer.
  "cluster/after-works-deleted",
  "cluster/after-azure-resource-deleted",
  "cluster/before-finalizer-removed",
  // An Azure long-running operation accepted by ARM, before its outcome is known.
  "azure/after-operation-started",
  "nodepool/after-work-applied",
  // maestro-server: an event on the broker, before the ManifestWork's status records it.
  "maestro-server/after-publish",
  "maestro-server/after-delete-published",
  // maestro-agent: some manifests of a work applied, not all; a work's objects gone, Deleted not sent.
  "maestro-agent/mid-apply",
  "maestro-agent/before-deleted-confirmed",
  // The usage exporter: the metering API accepted a batch, the ledger does not yet say so.
  "usage/after-export-before-mark",
] as const;

export type Failpoint = (typeof FAILPOINTS)[number];

const armed = new Set((process.env["HCP_FAILPOINTS"] ?? "").split(",").filter(Boolean));

export function failpoint(name: Failpoint): void {
  if (armed.has(name)) process.kill(process.pid, "SIGKILL");
}
