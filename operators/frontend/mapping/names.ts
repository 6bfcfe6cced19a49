/**
 * Where an ARM resource lives on the service cluster. ARM names are case-insensitive, a cluster
 * name is unique per resource group (not per subscription) and may be 54 characters long, so the
 * Kubernetes names are derived: the lower-cased ARM name, shortened, plus a hash of the lower-cased
 * resource group and names. The same ARM resource always maps to the same CR.
 */
import { createHash, randomInt } from "node:crypto";

export const FIELD_MANAGER = "hcp-frontend";

export function shortHash(text: string, length: number): string {
  return createHash("sha256").update(text).digest("hex").slice(0, length);
}

/** A prefix of a lower-cased name that stays a DNS label once joined with "-<hash>". */
function stem(name: string, max: number): string {
  return name.toLowerCase().slice(0, max).replace(/-+$/, "");
}

/** The namespace holding a subscription's resources and operations. */
export function subscriptionNamespace(subscriptionId: string): string {
  return `hcp-sub-${subscriptionId.toLowerCase()}`;
}

export function resourceGroupLabel(resourceGroup: string): string {
  return shortHash(resourceGroup.toLowerCase(), 16);
}

/** HcpCluster name: at most 54 characters (the CRD's limit), a DNS label starting with a letter. */
export function clusterCRName(resourceGroup: string, cluster: string): string {
  const key = `${resourceGroup}/${cluster}`.toLowerCase();
  return `${stem(cluster, 43)}-${shortHash(key, 10)}`;
}

/** NodePool name: short, because HyperShift's NodePool is named `<dns prefix>-<this>`. */
export function nodePoolCRName(resourceGroup: string, cluster: string, nodePool: string): string {
  const key = `${resourceGroup}/${cluster}/${nodePool}`.toLowerCase();
  return `${stem(nodePool, 15)}-${shortHash(key, 8)}`;
}

/** ExternalAuth name: the ARM name, shortened, and a hash; it also names the HostedCluster's OIDC provider. */
export function externalAuthCRName(resourceGroup: string, cluster: string, externalAuth: string): string {
  const key = `${resourceGroup}/${cluster}/externalauths/${externalAuth}`.toLowerCase();
  return `${stem(externalAuth, 15)}-${shortHash(key, 8)}`;
}

const PREFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
/** Random characters of a default DNS prefix: 36^10, about 2^51.7. */
const PREFIX_RANDOM_CHARACTERS = 10;

/**
 * The DNS prefix when the request names none (at most 15 characters). It must be unique in the
 * region's parent zone, whoever names their clusters what: a hash of the name could be searched
 * for a collision with another customer's, so the suffix is random, drawn once at creation and
 * stored (the frontend also refuses a prefix that is taken).
 */
export function defaultDnsPrefix(cluster: string): string {
  let suffix = "";
  for (let i = 0; i < PREFIX_RANDOM_CHARACTERS; i++)
    suffix += PREFIX_ALPHABET[randomInt(PREFIX_ALPHABET.length)];
  return `${stem(cluster, 4)}-${suffix}`;
}

/** The managed resource group when the request names none (ARO HCP's `arohcp-<name>-<suffix>`). */
export function defaultManagedResourceGroup(
  subscriptionId: string,
  resourceGroup: string,
  cluster: string,
): string {
  const key = `${subscriptionId}/${resourceGroup}/${cluster}`.toLowerCase();
  return `arohcp-${stem(cluster, 54)}-${shortHash(key, 12)}`;
}
