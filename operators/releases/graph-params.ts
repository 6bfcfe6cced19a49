/**
 * The update graph as the API server's admission can read it: the parameters of the
 * ValidatingAdmissionPolicy hcp-update-graph (config/bases/operators/admission.yaml), so that a
 * kubectl user's version change the plan holds is refused at the API server, `kubectl apply
 * --dry-run=server` included, in the plan's words (plan.ts). CEL reads no YAML and has no clock,
 * so the plan is worked out here for every version a cluster may ask for from every release it
 * may run, at `now`, and only the refusals are written: one key per
 * `<channel group>.<release it runs, or "new">.to.<spec.version.id>`, its value the reason. A
 * version asked from a release not listed passes: the cluster controller still holds it.
 */
import { CHANNEL_GROUPS, type ChannelGroup } from "../api/v1alpha1/meta.ts";
import { compareVersions, parseVersion, type ReleaseCatalog } from "./catalog.ts";
import { planVersion, type HoldReason } from "./plan.ts";

export const GRAPH_PARAMS_CONFIGMAP = "hcp-release-graph";

/** The word for a cluster that runs nothing yet (a create) in a key. */
export const NEW_CLUSTER = "new";

/**
 * The holds the graph decides. Not an unknown version (the cluster controller reports it, the
 * frontend refuses it) nor a node pool left behind (admission cannot see the pools).
 */
const GRAPH_HOLDS: readonly HoldReason[] = [
  "DowngradeRefused",
  "UpgradeSkipsMinor",
  "NoUpdateEdge",
  "EndOfLife",
];

export function paramKey(group: string, from: string | undefined, id: string): string {
  return `${group}.${from ?? NEW_CLUSTER}.to.${id}`;
}

const minorOf = (v: string): string => v.split(".").slice(0, 2).join(".");

/** Versions a cluster on `from` may ask for: the CRD compares spec with spec, which may run a minor ahead of what runs. */
function askable(from: string, id: string): boolean {
  const [fMajor, fMinor] = parseVersion(from) ?? [];
  const [major, minor] = parseVersion(id) ?? [];
  if (fMajor !== major || fMinor === undefined || minor === undefined) return false;
  if (minor < fMinor || minor > fMinor + 2) return false;
  return id.split(".").length === 2 || compareVersions(id, from) >= 0;
}

/** The refusals of one channel group: for each release a cluster may run (or none), each version it may ask for. */
function groupRefusals(catalog: ReleaseCatalog, group: ChannelGroup, now: number): Array<[string, string]> {
  const offered = catalog.releases.filter((r) => r.channelGroups.includes(group)).map((r) => r.version);
  const ids = [...new Set([...offered, ...offered.map(minorOf)])];
  const running = [...new Set(catalog.releases.map((r) => r.version))];
  const asks = [undefined, ...running].flatMap((from) =>
    ids.filter((id) => !from || askable(from, id)).map((id) => ({ from, id })),
  );
  return asks.flatMap(({ from, id }): Array<[string, string]> => {
    const plan = planVersion({ catalog, version: { id, channelGroup: group }, running: from, now });
    const hold = plan.holds.find((h) => GRAPH_HOLDS.includes(h.reason));
    return hold ? [[paramKey(group, from, id), hold.message]] : [];
  });
}

/** The ConfigMap data: each refusal the graph makes, keyed as paramKey says. */
export function graphParams(catalog: ReleaseCatalog, now: number): Record<string, string> {
  if (catalog.unavailable !== undefined) return {};
  return Object.fromEntries(CHANNEL_GROUPS.flatMap((group) => groupRefusals(catalog, group, now)));
}
