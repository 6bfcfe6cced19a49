/**
 * Preview features, gated as ARO HCP gates them: by a feature the subscription has registered
 * (ARM sends `properties.registeredFeatures` with the subscription, names case-insensitive). One
 * feature gates them all today, ExperimentalReleaseFeatures. Without it a request that asks for
 * a gated setting is refused with the feature's name, never quietly given less than it asked for.
 *
 * Gated: the channel groups `candidate` and `nightly` (releases not yet on the stable path), and
 * the experimental tags `aro-hcp.experimental.cluster.*`, of which the service honours:
 *   - `single-replica: "true"`: the control plane runs one replica of each component (HyperShift's
 *     controllerAvailabilityPolicy SingleReplica), for short-lived test clusters.
 * An experimental tag the service does not know is refused too: a tag that changes nothing must
 * not look as if it did.
 */
import type { ChannelGroup } from "../../api/v1alpha1/meta.ts";
import { isObject } from "../api/json.ts";
import { fieldErrors, type FieldError } from "../errors.ts";
import type { ResourceKind } from "../resource-id.ts";
import type { Subscription } from "../handlers/subscriptions.ts";

export const EXPERIMENTAL_RELEASE_FEATURES = "Microsoft.RedHatOpenShift/ExperimentalReleaseFeatures";

/** Channel groups whose releases only subscriptions with the experimental feature may run. */
export const GATED_CHANNEL_GROUPS: readonly ChannelGroup[] = ["candidate", "nightly"];

export const EXPERIMENTAL_CLUSTER_TAG_PREFIX = "aro-hcp.experimental.cluster.";
export const SINGLE_REPLICA_TAG = `${EXPERIMENTAL_CLUSTER_TAG_PREFIX}single-replica`;
/** The experimental tags the service acts on, with the values each takes. */
const EXPERIMENTAL_TAGS: Record<string, readonly string[]> = { [SINGLE_REPLICA_TAG]: ["true", "false"] };

/** The names (lower case) of the features the subscription has in state Registered. */
export function registeredFeatures(sub: Subscription | undefined): Set<string> {
  const list = sub?.properties?.["registeredFeatures"];
  const names = new Set<string>();
  if (!Array.isArray(list)) return names;
  for (const f of list)
    if (isObject(f) && typeof f["name"] === "string" && f["state"] === "Registered")
      names.add(f["name"].toLowerCase());
  return names;
}

export const hasFeature = (sub: Subscription | undefined, feature: string): boolean =>
  registeredFeatures(sub).has(feature.toLowerCase());

/** ARM tag names are case-insensitive: the experimental tags, by their lower-case names. */
export function experimentalTags(tags: Record<string, string> | undefined): Map<string, [string, string]> {
  const out = new Map<string, [string, string]>();
  for (const [key, value] of Object.entries(tags ?? {}))
    if (key.toLowerCase().startsWith(EXPERIMENTAL_CLUSTER_TAG_PREFIX))
      out.set(key.toLowerCase(), [key, value]);
  return out;
}

export interface GatedSettings {
  channelGroup: string | undefined;
  tags: Record<string, string> | undefined;
}

export interface GatedRequest extends GatedSettings {
  kind: ResourceKind;
  /** The resource as stored, for an update: what it already has stays, registered or not. */
  stored?: GatedSettings;
}

const NEEDS = `needs the subscription feature ${EXPERIMENTAL_RELEASE_FEATURES} registered`;
const CREATION_ONLY = "is read at creation only: a control plane's replica count cannot change";

function channelGroupError(enrolled: boolean, r: GatedRequest): FieldError[] {
  const asked = r.channelGroup;
  if (enrolled || asked === r.stored?.channelGroup || !GATED_CHANNEL_GROUPS.some((g) => g === asked))
    return [];
  return [{ target: "properties.version.channelGroup", message: `Channel group '${asked}' ${NEEDS}` }];
}

/** An experimental tag of the request, by its lower-case name, and its value before, if any. */
interface AskedTag {
  name: string;
  key: string;
  value: string;
  was: string | undefined;
}

/** What is wrong with one experimental tag that is new or changed, if anything. */
function tagError(
  enrolled: boolean,
  r: GatedRequest,
  { name, key, value, was }: AskedTag,
): string | undefined {
  const values = EXPERIMENTAL_TAGS[name];
  if (was === value) return undefined;
  // Saying "false" of a cluster that never had the tag changes nothing; anything else would.
  if (r.stored && name === SINGLE_REPLICA_TAG && (was ?? "false") !== value)
    return `The tag '${key}' ${CREATION_ONLY}`;
  if (!enrolled) return `The experimental tag '${key}' ${NEEDS}`;
  if (r.kind !== "cluster") return `The experimental tag '${key}' applies to clusters only`;
  if (!values)
    return `'${key}' is not an experimental tag this service knows; known: ${Object.keys(EXPERIMENTAL_TAGS).join(", ")}`;
  if (!values.includes(value))
    return `The tag '${key}' must be exactly one of ${values.join(", ")}, not '${value}'`;
  return undefined;
}

/** Refuses, with every reason at once, the gated settings the subscription has no feature for. */
export function checkPreviewFeatures(sub: Subscription | undefined, r: GatedRequest): void {
  const enrolled = hasFeature(sub, EXPERIMENTAL_RELEASE_FEATURES);
  const errors = channelGroupError(enrolled, r);
  const now = experimentalTags(r.tags);
  const before = experimentalTags(r.stored?.tags);
  for (const [name, [key, value]] of now) {
    const message = tagError(enrolled, r, { name, key, value, was: before.get(name)?.[1] });
    if (message) errors.push({ target: `tags[${key}]`, message });
  }
  const removed = before.get(SINGLE_REPLICA_TAG);
  if (removed?.[1] === "true" && !now.has(SINGLE_REPLICA_TAG))
    errors.push({ target: `tags[${removed[0]}]`, message: `The tag '${removed[0]}' ${CREATION_ONLY}` });
  if (errors.length > 0) throw fieldErrors(errors);
}

/** Whether the (already admitted) tags ask for a single-replica control plane. */
export const wantsSingleReplica = (tags: Record<string, string> | undefined): boolean =>
  experimentalTags(tags).get(SINGLE_REPLICA_TAG)?.[1] === "true";
