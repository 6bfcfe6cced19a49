import { describe, expect, it } from "vitest";
import { withMark } from "./actions.ts";
import { decide, markedSince } from "./decide.ts";
import {
  clusterOwner,
  ORPHANED_SINCE_TAG,
  regionOwners,
  underParentZone,
  type OwnedResource,
} from "./inventory.ts";

const LIVE = "11111111-2222-4333-8444-555555555555";
const GONE = "99999999-2222-4333-8444-555555555555";
const HOUR = 3_600_000;
const now = new Date("2026-11-28T12:00:00Z");
const live = new Set([LIVE]);

const owned = (id: string, tags: Record<string, string> = {}) => ({
  owner: { id, cluster: "ns/c" },
  tags: { "hcp.aro.dev_owner": id, ...tags },
});
const markedAt = (iso: string) => ({ [ORPHANED_SINCE_TAG]: iso });

describe("decide", () => {
  it.each([
    ["a live owner, unmarked", owned(LIVE), { action: "keep" }],
    ["a live owner, marked", owned(LIVE, markedAt("2026-11-27T00:00:00Z")), { action: "unmark" }],
    ["no owner, unmarked", owned(GONE), { action: "mark" }],
    ["no owner, an unreadable mark", owned(GONE, markedAt("yesterday")), { action: "mark" }],
    [
      "no owner, marked within the grace",
      owned(GONE, markedAt("2026-11-28T11:00:00Z")),
      {
        action: "wait",
        since: new Date("2026-11-28T11:00:00Z"),
        deleteAfter: new Date("2026-11-28T13:00:00Z"),
      },
    ],
    [
      "no owner, marked exactly the grace ago",
      owned(GONE, markedAt("2026-11-28T10:00:00Z")),
      { action: "delete", since: new Date("2026-11-28T10:00:00Z") },
    ],
    [
      "no owner, a mark from a clock ahead",
      owned(GONE, markedAt("2026-11-28T13:00:00Z")),
      {
        action: "wait",
        since: new Date("2026-11-28T13:00:00Z"),
        deleteAfter: new Date("2026-11-28T15:00:00Z"),
      },
    ],
  ])("%s", (_, resource, verdict) => {
    expect(decide(resource, live, now, 2 * HOUR)).toEqual(verdict);
  });

  it("reads the mark's key case-insensitively, as ARM compares tag names", () => {
    const r = owned(GONE, { "HCP.ARO.DEV_ORPHANED-SINCE": "2026-11-28T09:00:00Z" });
    expect(decide(r, live, now, 2 * HOUR)).toEqual({
      action: "delete",
      since: new Date("2026-11-28T09:00:00Z"),
    });
  });
});

describe("withMark", () => {
  it("sets the mark keeping other tags, and removes it (any case) keeping them too", () => {
    const tags = { "hcp.aro.dev_owner": GONE, team: "a" };
    const marked = withMark(tags, now);
    expect(marked).toEqual({ ...tags, [ORPHANED_SINCE_TAG]: "2026-11-28T12:00:00.000Z" });
    expect(markedSince({ tags: marked })).toEqual(now);
    expect(withMark({ ...tags, "HCP.aro.dev_Orphaned-Since": "x" }, undefined)).toEqual(tags);
  });
});

describe("clusterOwner", () => {
  it("is a cluster's only when the owner tag holds a Kubernetes UID", () => {
    expect(clusterOwner({ "hcp.aro.dev_owner": LIVE, "hcp.aro.dev_cluster": "ns/c" })).toEqual({
      id: LIVE,
      cluster: "ns/c",
    });
    expect(
      clusterOwner({ "hcp.aro.dev_owner": "hcp-service", "hcp.aro.dev_cluster": "region" }),
    ).toBeUndefined();
    expect(clusterOwner({ team: "a" })).toBeUndefined();
    expect(clusterOwner(undefined)).toBeUndefined();
  });
});

describe("regionOwners", () => {
  const parentZone = { subscriptionId: "s", resourceGroup: "g", name: "hcp.example.com" };
  const item = (kind: OwnedResource["kind"], name: string, id: string): OwnedResource => ({
    kind,
    id: name,
    subscriptionId: "s",
    resourceGroup: "g",
    name,
    tags: {},
    owner: { id, cluster: "ns/c" },
  });

  it("are the owners of a delegation in the parent zone or of a zone under it, nothing else", () => {
    const found = [
      item("DnsRecordSet", "a", "delegated"),
      item("DnsZone", "b.HCP.example.com.", "zoned"),
      item("DnsZone", "c.westus3.example.org", "elsewhere"),
      item("DnsZone", "hcp.example.com", "the-parent-itself"),
      item("DnsZone", "xhcp.example.com", "a-sibling"),
      item("ResourceGroup", "rg", "grouped"),
    ];
    expect([...regionOwners(found, parentZone)].sort()).toEqual(["delegated", "zoned"]);
    expect(underParentZone("a.b.hcp.example.com", parentZone)).toBe(true);
  });
});
