/**
 * `hcpctl upgrade plan` as text: where the version leads and by which hops of the update graph,
 * what each node pool does (and which must be upgraded first, with why), and what holds the
 * upgrade, in the words the frontend refuses it with and the cluster controller holds it with
 * (releases/plan.ts). The data form is UpgradePlan.
 */
import type { PoolAction, VersionPlan } from "../releases/plan.ts";
import type { Painter, Style } from "./paint.ts";

/** The plan as data (-o json|yaml). */
export interface UpgradePlan {
  apiVersion: "hcpctl.hcp.aro.dev/v1alpha1";
  kind: "UpgradePlan";
  cluster: { namespace: string; name: string };
  /** The version asked for: --to, else the cluster's spec.version.id. */
  to: string;
  channelGroup: string;
  upgradePolicy: string;
  /** What the control plane runs (status.version), if it reported it. */
  runs?: string;
  /** The release the control plane is asked to run now (status.desiredVersion). */
  desired?: string;
  /** Where the version leads; absent when no release can be had (a node pool's hold leaves it). */
  target?: string;
  /** True when nothing holds the upgrade. */
  allowed: boolean;
  automaticPatch: boolean;
  hops: Array<{ from: string; to: string; kind: "patch" | "minor"; image: string }>;
  pools: Array<{ name: string; asks?: string; action: PoolAction; why: string }>;
  holds: Array<{ reason: string; message: string }>;
  endOfLife?: { version: string; since: string };
}

const minorOf = (v: string): string => v.split(".").slice(0, 2).join(".");

export function upgradePlan(input: {
  namespace: string;
  name: string;
  to: string;
  upgradePolicy: string;
  runs?: string;
  desired?: string;
  plan: VersionPlan;
}): UpgradePlan {
  const { plan } = input;
  return {
    apiVersion: "hcpctl.hcp.aro.dev/v1alpha1",
    kind: "UpgradePlan",
    cluster: { namespace: input.namespace, name: input.name },
    to: input.to,
    channelGroup: plan.channelGroup,
    upgradePolicy: input.upgradePolicy,
    ...(input.runs ? { runs: input.runs } : {}),
    ...(input.desired ? { desired: input.desired } : {}),
    ...(plan.target ? { target: plan.target.version } : {}),
    allowed: plan.holds.length === 0,
    automaticPatch: plan.automaticPatch,
    hops: plan.hops.map((h) => ({
      from: h.from,
      to: h.to.version,
      kind: minorOf(h.from) === minorOf(h.to.version) ? "patch" : "minor",
      image: h.to.image,
    })),
    pools: plan.pools.map((p) => ({
      name: p.name,
      ...(p.asks ? { asks: p.asks } : {}),
      action: p.action,
      why: p.why,
    })),
    holds: plan.holds.map((h) => ({ reason: h.reason, message: h.message })),
    ...(plan.endOfLife ? { endOfLife: plan.endOfLife } : {}),
  };
}

/** A cell: its text, or its text and the style it is painted in once padded. */
type Cell = string | { text: string; style: Style };

/** Rows with their columns padded to the widest cell, two spaces apart; styles painted after padding. */
function columns(rows: Cell[][], paint: Painter, indent = "  "): string {
  const text = (c: Cell): string => (typeof c === "string" ? c : c.text);
  const widths: number[] = [];
  for (const row of rows) row.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, text(c).length)));
  const cell = (c: Cell, i: number, last: boolean): string => {
    const padded = last ? text(c) : text(c).padEnd(widths[i] ?? 0);
    return typeof c === "string" ? padded : paint(c.style, padded);
  };
  return rows
    .map((row) => `${indent}${row.map((c, i) => cell(c, i, i === row.length - 1)).join("  ")}\n`)
    .join("");
}

const ACTION_WORDS: Record<PoolAction, string> = {
  rolls: "rolls",
  stays: "stays",
  upgradeFirst: "upgrade first",
};

function header(p: UpgradePlan, paint: Painter): string {
  const runs = p.runs
    ? `${p.runs}${p.endOfLife ? paint("yellow", ` (past its end of life since ${p.endOfLife.since})`) : ""}`
    : "not reported yet";
  const leads = p.target
    ? `${p.to} → ${p.target}${p.automaticPatch ? " (upgradePolicy AutomaticPatch)" : ""}`
    : p.to;
  const rows: Cell[][] = [
    ["Cluster:", `${p.cluster.namespace}/${p.cluster.name}`],
    ["Channel group:", p.channelGroup],
    ["Upgrade policy:", p.upgradePolicy],
    ["Runs:", runs],
    ...(p.desired && p.desired !== p.runs ? [["Upgrading to:", p.desired]] : []),
    ["Version:", leads],
  ];
  return columns(rows, paint, "");
}

function pathSection(p: UpgradePlan, paint: Painter): string {
  if (!p.target) return "";
  if (p.hops.length === 0) return `\nPath: none, the control plane stays on ${p.target ?? p.runs ?? p.to}\n`;
  const rows = p.hops.map((h, i) => [`${i + 1}.`, `${h.from} → ${h.to}`, h.kind, h.image]);
  return `\nPath (${p.hops.length} ${p.hops.length === 1 ? "hop" : "hops"}, one at a time):\n${columns(rows, paint)}`;
}

function poolSection(p: UpgradePlan, paint: Painter): string {
  if (p.pools.length === 0) return "\nNode pools: none\n";
  const rows = p.pools.map((pool): Cell[] => [
    pool.name,
    pool.asks ?? "follows",
    pool.action === "upgradeFirst"
      ? { text: ACTION_WORDS[pool.action], style: "red" }
      : ACTION_WORDS[pool.action],
    pool.why,
  ]);
  return `\nNode pools:\n${columns(rows, paint)}`;
}

function holdSection(p: UpgradePlan, paint: Painter): string {
  if (p.allowed) return `\n${paint("green", "Allowed")}: nothing holds the upgrade\n`;
  const rows = p.holds.map((h): Cell[] => [{ text: h.reason, style: "red" }, h.message]);
  return `\n${paint("red", "Refused")}:\n${columns(rows, paint)}`;
}

export function renderPlan(p: UpgradePlan, paint: Painter): string {
  return header(p, paint) + pathSection(p, paint) + poolSection(p, paint) + holdSection(p, paint);
}
