/**
 * CR field paths as the API server names them in refusals, and the ARM paths they come from;
 * longest first so that the most specific mapping wins.
 */
const FIELD_PATHS: Array<[string, string]> = [
  ["spec.platform.azure.identities", "properties.platform.operatorsAuthentication.userAssignedIdentities"],
  ["spec.platform.azure.encryptionAtHost", "properties.platform.enableEncryptionAtHost"],
  ["spec.platform.azure.location", "location"],
  ["spec.platform.azure.subscriptionId", "id"],
  ["spec.platform.azure", "properties.platform"],
  ["spec.api.visibility", "properties.api.visibility"],
  ["spec.api.authorizedCIDRs", "properties.api.authorizedCidrs"],
  ["spec.fips", "properties.cryptoRestrictions"],
  ["spec.clusterRef", "id"],
  ["spec.clients", "properties.clients"],
  ["spec.issuer", "properties.issuer"],
  ["spec.claim", "properties.claim"],
  ["metadata.name", "name"],
  ["spec", "properties"],
];

/** Rewrites CR field paths (in a target or a message) to the ARM request's paths. */
export function armFieldPath(text: string): string {
  const pattern = new RegExp(FIELD_PATHS.map(([cr]) => cr.replace(/\./g, "\\.")).join("|"), "g");
  return text.replace(pattern, (m) => FIELD_PATHS.find(([cr]) => cr === m)?.[1] ?? m);
}
