/**
 * Upgrade planning on the update graph (catalog.ts describes the graph): where a cluster's
 * spec.version leads from the release it runs, by which hops, what holds it and why, and what its
 * node pools do. One pure module, so the frontend (a 400), the cluster controller (ValidVersion and
 * the release it asks HyperShift for), hcpctl (`upgrade plan`) and the admission policy's
 * parameters (release-graph.ts) say the same thing. Time is an input: a release past its end of
 * life is judged against `now`.
 *
 * What a version asks for:
 * - a release (4.19.7): exactly that release. With upgradePolicy AutomaticPatch it is a floor: the
 *   cluster moves on to the newest z-stream of its minor the graph reaches (never to another
 *   minor);
 * - a minor (4.19): the newest release of it the graph reaches from what the cluster runs (for a
 *   new cluster: the newest not past its end of life), as ARO HCP's X.Y versions do: naming only
 *   the minor asks for its newest patch, whatever the policy.
 * The control plane moves one hop at a time: the release asked for HyperShift is the first hop of
 * the path; an upgrade under way (`previous`) goes on through the release it started.
 */
import type { ChannelGroup } from "../api/v1alpha1/meta.ts";
import type { UpgradePolicy } from "../api/v1alpha1/hcpcluster.ts";
import {
  compareVersions,
  MAX_NODE_POOL_MINOR_SKEW,
  parseVersion,
  poolTooFarBehind,
  skippedMinor,
  type ReleaseCatalog,
  type Release,
} from "./catalog.ts";
import { UpdateGraph } from "./update-graph.ts";

export type HoldReason =
  | "CatalogUnavailable"
  | "UnknownVersion"
  | "DowngradeRefused"
  | "UpgradeSkipsMinor"
  | "NoUpdateEdge"
  | "EndOfLife"
  | "NodePoolsTooFarBehind";

/** Why the version cannot be had: the reason (a condition reason) and what to do, in words. */
export interface Hold {
  reason: HoldReason;
  message: string;
}

/** One edge of the path: the control plane moves from `from` to `to`. */
export interface Hop {
  from: string;
  to: Release;
}

export type PoolAction = "rolls" | "stays" | "upgradeFirst";

export interface PoolPlan {
  name: string;
  /** The version the pool names; undefined when it follows its cluster. */
  asks?: string;
  /** rolls: follows the control plane, hop by hop; stays: keeps its own version; upgradeFirst: holds the upgrade. */
  action: PoolAction;
  why: string;
}

export interface VersionPlan {
  channelGroup: ChannelGroup;
  /** What the control plane runs, or the release it is being installed at; undefined for a new cluster. */
  from?: string;
  /** Where spec.version leads (undefined when held). */
  target?: Release;
  /** The release to ask HyperShift for now: the first hop, the target of an install, or what runs. */
  next?: Release;
  hops: Hop[];
  /** The target is newer than the version asks for: upgradePolicy AutomaticPatch took it there. */
  automaticPatch: boolean;
  pools: PoolPlan[];
  /** Empty when the plan may go ahead. */
  holds: Hold[];
  /** The release the control plane runs is past its end of life. */
  endOfLife?: { version: string; since: string };
}

export interface PoolInput {
  name: string;
  /** spec.version.id; undefined when the pool follows its cluster. */
  version?: string;
}

export interface PlanInput {
  catalog: ReleaseCatalog;
  version: { id: string; channelGroup?: ChannelGroup; upgradePolicy?: UpgradePolicy };
  /** What the control plane runs (status.version). */
  running?: string;
  /** The release the controller last asked HyperShift for (status.desiredVersion). */
  previous?: string;
  pools?: readonly PoolInput[];
  /** Milliseconds since the epoch. */
  now: number;
}

const minorOf = (version: string): string => version.split(".").slice(0, 2).join(".");

type Step<T> = { ok: true; value: T } | { ok: false; hold: Hold };
const held = <T>(reason: HoldReason, message: string): Step<T> => ({ ok: false, hold: { reason, message } });

/** The release a cluster already on `from` stays on. */
function stay(g: UpdateGraph, from: string, id: string): Step<Release> {
  const r = g.known(from);
  if (r) return { ok: true, value: r };
  return held(
    "UnknownVersion",
    `the control plane runs ${from}, which the release catalog no longer lists, and no release ${id} asks for can be reached from it`,
  );
}

/** What an X.Y.Z version asks for. */
function askedRelease(
  g: UpdateGraph,
  id: string,
  from: string | undefined,
  automatic: boolean,
): Step<Release> {
  const r = g.release(id);
  if (!r) return held("UnknownVersion", unknownMessage(g, id));
  if (from && compareVersions(id, from) < 0) {
    if (automatic && minorOf(id) === minorOf(from)) return stay(g, from, id);
    return held(
      "DowngradeRefused",
      `${id} is older than ${from}, which the control plane runs; OpenShift does not downgrade`,
    );
  }
  const skip = from ? skippedMinor(from, id) : undefined;
  if (skip) return held("UpgradeSkipsMinor", `${id} cannot be reached from ${from}: ${skip}`);
  const ended = from === undefined ? g.endedOn(r) : undefined;
  if (ended) return held("EndOfLife", endOfLifeMessage(g, r.version, ended));
  return { ok: true, value: r };
}

/** What an X.Y version asks for: its newest release reachable (for a new cluster, not past its end of life). */
function askedMinor(g: UpdateGraph, id: string, from: string | undefined): Step<Release> {
  const candidates = g.releases.filter((r) => minorOf(r.version) === id);
  if (candidates.length === 0) return held("UnknownVersion", unknownMessage(g, id));
  if (from === undefined) {
    const live = candidates.find((r) => !g.endedOn(r));
    if (live) return { ok: true, value: live };
    return held("EndOfLife", endOfLifeMessage(g, id, g.endedOn(candidates[0]!) ?? ""));
  }
  if (compareVersions(id, minorOf(from)) < 0)
    return held(
      "DowngradeRefused",
      `${id} is older than ${from}, which the control plane runs; OpenShift does not downgrade`,
    );
  const skip = skippedMinor(from, id);
  if (skip) return held("UpgradeSkipsMinor", `${id} cannot be reached from ${from}: ${skip}`);
  const reachable = g.explore(from);
  const newest = candidates.find((r) => reachable.has(r.version));
  if (newest) return { ok: true, value: newest };
  if (minorOf(from) === id) return stay(g, from, id);
  return unreachable(g, from, candidates);
}

/** Why no release of `candidates` (newest first) can be reached from `from`. */
function unreachable(g: UpdateGraph, from: string, candidates: readonly Release[]): Step<Release> {
  const live = candidates.filter((r) => !g.endedOn(r));
  if (live.length === 0) {
    const first = candidates[0]!;
    return held("EndOfLife", endOfLifeMessage(g, minorOf(first.version), g.endedOn(first) ?? ""));
  }
  const why = live.map(
    (r) =>
      g.edgeRefusal(from, r)?.message ??
      `${r.version} is reached only through releases past their end of life`,
  );
  return held(
    "NoUpdateEdge",
    `no release of ${minorOf(live[0]!.version)} in channel group ${g.group} can be reached from ${from}: ${why.join("; ")}`,
  );
}

function unknownMessage(g: UpdateGraph, id: string): string {
  const offered = [...new Set(g.releases.map((r) => r.version))].reverse().join(", ") || "none";
  return `OpenShift ${id} is not offered in channel group ${g.group}; offered: ${offered}`;
}

function endOfLifeMessage(g: UpdateGraph, id: string, since: string): string {
  const live = g.releases.filter((r) => !g.endedOn(r)).map((r) => minorOf(r.version));
  const offered = [...new Set(live)].reverse().join(", ") || "none";
  return `OpenShift ${id} reached its end of life on ${since}: no new cluster runs it and no cluster moves to it; offered in channel group ${g.group}: ${offered}`;
}

/** With AutomaticPatch, the newest z-stream of the asked release's minor the graph reaches from `from`. */
function automaticTarget(g: UpdateGraph, asked: Release, from: string): Release {
  const reachable = g.explore(from);
  const newer = g.releases.find(
    (r) =>
      minorOf(r.version) === minorOf(asked.version) &&
      compareVersions(r.version, asked.version) > 0 &&
      reachable.has(r.version),
  );
  return newer ?? asked;
}

/** The hops of an upgrade under way through the release it started (`previous`), when they lead to the target. */
function hopsInFlight(g: UpdateGraph, input: PlanInput, target: Release): Hop[] | undefined {
  const { running, previous } = input;
  if (!running || !previous || previous === running) return undefined;
  const via = g.known(previous);
  if (!via || compareVersions(via.version, running) <= 0) return undefined;
  const rest = g.path(via.version, target.version);
  return rest ? [{ from: running, to: via }, ...rest] : undefined;
}

/** The hops from what runs to the target. */
function hopsTo(g: UpdateGraph, input: PlanInput, from: string, target: Release): Step<Hop[]> {
  const hops = hopsInFlight(g, input, target) ?? g.path(from, target.version);
  if (hops) return { ok: true, value: hops };
  const direct = g.edgeRefusal(from, target);
  if (direct?.reason === "EndOfLife") return held("EndOfLife", direct.message);
  return held(
    "NoUpdateEdge",
    `no path on the update graph of channel group ${g.group} leads from ${from} to ${target.version}: ${direct?.message ?? "every way there passes a release past its end of life"}`,
  );
}

/** What each pool does on the way to `target`, and the hold of those left too far behind. */
function planPools(
  pools: readonly PoolInput[],
  from: string | undefined,
  target: Release,
  upgrading: boolean,
): { plans: PoolPlan[]; hold?: Hold } {
  const behind: string[] = [];
  const plans = pools.map((p): PoolPlan => {
    if (p.version === undefined)
      return { name: p.name, action: "rolls", why: "follows the control plane: rolls after it, hop by hop" };
    const tooFar = poolTooFarBehind(p.version, target.version);
    const alreadyFar = from ? poolTooFarBehind(p.version, from) : undefined;
    if (upgrading && tooFar && !alreadyFar) {
      behind.push(`node pool ${p.name}: ${tooFar}`);
      const [major, minor] = parseVersion(target.version) ?? [];
      const least = `${major}.${(minor ?? 0) - MAX_NODE_POOL_MINOR_SKEW}`;
      return {
        name: p.name,
        asks: p.version,
        action: "upgradeFirst",
        why: `${tooFar}: upgrade it to ${least} or newer first`,
      };
    }
    return { name: p.name, asks: p.version, action: "stays", why: `keeps its own version ${p.version}` };
  });
  if (behind.length === 0) return { plans };
  return {
    plans,
    hold: {
      reason: "NodePoolsTooFarBehind",
      message: `Version ${target.version} would leave node pools too far behind; upgrade them first (${behind.join("; ")})`,
    },
  };
}

function emptyPlan(input: PlanInput, group: ChannelGroup, from: string | undefined, hold: Hold): VersionPlan {
  return {
    channelGroup: group,
    ...(from ? { from } : {}),
    hops: [],
    automaticPatch: false,
    pools: (input.pools ?? []).map((p): PoolPlan => ({
      name: p.name,
      ...(p.version ? { asks: p.version } : {}),
      action: p.version ? "stays" : "rolls",
      why: "the upgrade is held",
    })),
    holds: [hold],
  };
}

/** The running release's end of life, if it has passed. */
function runningEndOfLife(g: UpdateGraph, running: string | undefined): VersionPlan["endOfLife"] {
  const r = running ? g.known(running) : undefined;
  const since = r ? g.endedOn(r) : undefined;
  return r && since ? { version: r.version, since } : undefined;
}

/** The release the version leads to and the hops there, or what holds it. */
function route(
  g: UpdateGraph,
  input: PlanInput,
  from: string | undefined,
): Step<{ asked: Release; target: Release; hops: Hop[] }> {
  const { id, upgradePolicy } = input.version;
  const automatic = upgradePolicy === "AutomaticPatch";
  const asked =
    parseVersion(id)?.length === 3 ? askedRelease(g, id, from, automatic) : askedMinor(g, id, from);
  if (!asked.ok) return asked;
  if (!from) return { ok: true, value: { asked: asked.value, target: asked.value, hops: [] } };
  const target = automatic ? automaticTarget(g, asked.value, from) : asked.value;
  const hops = hopsTo(g, input, from, target);
  if (!hops.ok) return hops;
  return { ok: true, value: { asked: asked.value, target, hops: hops.value } };
}

/** Where the version leads, how, and what holds it. */
export function planVersion(input: PlanInput): VersionPlan {
  const group = input.version.channelGroup ?? "stable";
  const from = input.running ?? input.previous;
  const { catalog } = input;
  if (catalog.unavailable !== undefined)
    return emptyPlan(input, group, from, { reason: "CatalogUnavailable", message: catalog.unavailable });
  const g = UpdateGraph.of(catalog, group, input.now);
  const endOfLife = runningEndOfLife(g, input.running);
  const withEol = (plan: VersionPlan): VersionPlan => (endOfLife ? { ...plan, endOfLife } : plan);
  const routed = route(g, input, from);
  if (!routed.ok) return withEol(emptyPlan(input, group, from, routed.hold));
  const { asked, target, hops } = routed.value;
  const pools = planPools(input.pools ?? [], from, target, hops.length > 0);
  return withEol({
    channelGroup: group,
    ...(from ? { from } : {}),
    target,
    next: hops[0]?.to ?? target,
    hops,
    automaticPatch: target !== asked,
    pools: pools.plans,
    holds: pools.hold ? [pools.hold] : [],
  });
}

/** The first instant after `now` at which a release reaches its end of life: plans may change then. */
export function nextEndOfLife(catalog: ReleaseCatalog, now: number): number | undefined {
  let soonest: number | undefined;
  for (const r of catalog.releases) {
    const at = r.endOfLifeTimestamp ? Date.parse(r.endOfLifeTimestamp) : NaN;
    if (at > now && (soonest === undefined || at < soonest)) soonest = at;
  }
  return soonest;
}
