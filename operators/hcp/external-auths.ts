/**
 * What the cluster controller and the externalauth controller agree on about a cluster's
 * ExternalAuths: which of them the HostedCluster carries, and the annotation on the cluster's
 * ManifestWork that records each one's generation as the work carries it.
 */
import type { ExternalAuth } from "../api/v1alpha1/index.ts";
import { EXTERNAL_AUTHS_ANNOTATION } from "../api/v1alpha1/labels.ts";
import type { KubeObject } from "../runtime/kube.ts";

/** At most one provider: HyperShift's CRD says so (oidcProviders maxItems 1), and so does ARO HCP. */
export const MAX_OIDC_PROVIDERS = 1;

/** The ExternalAuths the HostedCluster carries: not deleting, the oldest first, at most MAX_OIDC_PROVIDERS. */
export function externalAuthsCarried(all: readonly ExternalAuth[]): ExternalAuth[] {
  return all
    .filter((ea) => !ea.metadata.deletionTimestamp)
    .sort(
      (a, b) =>
        (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") ||
        (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""),
    )
    .slice(0, MAX_OIDC_PROVIDERS);
}

/** The annotation's value for the carried ExternalAuths; undefined for none. */
export function carriedAnnotation(carried: readonly ExternalAuth[]): Record<string, string> {
  if (carried.length === 0) return {};
  const value = carried.map((ea) => `${ea.metadata.name ?? ""}=${ea.metadata.generation ?? 0}`).join(",");
  return { [EXTERNAL_AUTHS_ANNOTATION]: value };
}

/** name → generation as a work carries them (empty for no work or no annotation). */
export function carriedBy(work: KubeObject | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of (work?.metadata.annotations?.[EXTERNAL_AUTHS_ANNOTATION] ?? "").split(",")) {
    const [name, generation] = entry.split("=");
    const g = Number(generation);
    if (name && Number.isInteger(g)) out.set(name, g);
  }
  return out;
}
