/**
 * What the simulator reads from a HostedCluster or NodePool without a registry: the OpenShift
 * version and payload architecture from a release image's tag, the injected failure from an
 * annotation, and the host names a real control plane would publish.
 */
import type { HostedCluster, PayloadArch } from "../../operators/api/hypershift/v1beta1/index.ts";

/** `"<Reason>: <message>"` on a HostedCluster or NodePool makes it fail until the annotation is removed. */
export const FAIL_ANNOTATION = "hypershift-simulator.hcp.aro.dev/fail";

/** The reason used when the annotation has no valid `Reason:` prefix. */
export const DEFAULT_FAILURE_REASON = "SimulatedFailure";

export interface ReleaseInfo {
  /** "4.19.7" from `…:4.19.7-multi`; undefined when the tag carries no x.y.z version (a digest, say). */
  version: string | undefined;
  arch: PayloadArch;
}

const archSuffixes: Record<string, PayloadArch> = {
  multi: "Multi",
  x86_64: "AMD64",
  amd64: "AMD64",
  aarch64: "ARM64",
  arm64: "ARM64",
  ppc64le: "PPC64LE",
  s390x: "S390X",
};

/** The tag of an image reference: after the last ":" of the last path segment, digest removed. */
function imageTag(image: string): string {
  const withoutDigest = image.split("@")[0] ?? "";
  const lastSegment = withoutDigest.slice(withoutDigest.lastIndexOf("/") + 1);
  const colon = lastSegment.lastIndexOf(":");
  return colon < 0 ? "" : lastSegment.slice(colon + 1);
}

/**
 * Version and architecture from an OpenShift release image tag, the way the release tags are
 * built: `<version>-<arch>`, e.g. `4.19.7-multi`, `4.20.0-ec.3-x86_64`. A tag without an
 * architecture suffix is taken as an amd64 payload.
 */
export function parseReleaseImage(image: string): ReleaseInfo {
  let tag = imageTag(image);
  let arch: PayloadArch = "AMD64";
  const dash = tag.lastIndexOf("-");
  const suffix = dash < 0 ? undefined : archSuffixes[tag.slice(dash + 1)];
  if (suffix) {
    arch = suffix;
    tag = tag.slice(0, dash);
  }
  return { version: /^\d+\.\d+\.\d+/.test(tag) ? tag : undefined, arch };
}

export interface Failure {
  reason: string;
  message: string;
}

/** HyperShift's condition reason pattern (metav1.Condition). */
const reasonPattern = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

/** The injected failure of an object, or undefined. */
export function failureOf(annotations: Record<string, string> | undefined): Failure | undefined {
  const value = annotations?.[FAIL_ANNOTATION];
  if (value === undefined) return undefined;
  const colon = value.indexOf(":");
  const reason = colon < 0 ? "" : value.slice(0, colon).trim();
  if (!reasonPattern.test(reason)) {
    return { reason: DEFAULT_FAILURE_REASON, message: value.trim() || "Failure injected by annotation" };
  }
  return { reason, message: value.slice(colon + 1).trim() || reason };
}

/** The zone the cluster's names live in: `<baseDomainPrefix or name>.<baseDomain>`, or a local stand-in. */
function clusterZone(hc: HostedCluster): string {
  const dns = hc.spec.dns;
  const prefix = dns?.baseDomainPrefix || hc.metadata.name || "cluster";
  return `${prefix}.${dns?.baseDomain || "hypershift.local"}`;
}

/** The API server's public host: spec.kubeAPIServerDNSName, else `api.<prefix>.<baseDomain>`. */
export function apiServerHost(hc: HostedCluster): string {
  return hc.spec.kubeAPIServerDNSName || `api.${clusterZone(hc)}`;
}

/** The ignition server's host: the Ignition route's hostname, else one under the cluster's zone. */
export function ignitionHost(hc: HostedCluster): string {
  const ignition = hc.spec.services.find((s) => s.service === "Ignition");
  return ignition?.servicePublishingStrategy.route?.hostname || `ignition.${clusterZone(hc)}`;
}
