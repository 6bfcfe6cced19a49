import { describe, expect, it } from "vitest";
import { isDeepStrictEqual } from "node:util";
import type { HcpCluster } from "../api/v1alpha1/index.ts";
import { sampleCluster } from "../../test/support/samples.ts";
import { clusterAsPoolsSeeIt } from "./controller.ts";

const condition = (type: string, status: string, message = "") => ({
  type,
  status: status as "True" | "False",
  reason: "R",
  message,
  lastTransitionTime: "2030-01-01T00:00:00Z",
});

function cluster(edit: (c: HcpCluster) => void): HcpCluster {
  const c = sampleCluster();
  c.metadata.generation = 1;
  c.status = {
    managementCluster: "mgmt-1",
    conditions: [condition("Ready", "False", "waiting"), condition("DNSZoneReady", "False")],
  };
  edit(c);
  return c;
}

describe("which cluster changes wake its node pools", () => {
  it.each([
    {
      change: "another step's condition",
      wakes: false,
      edit: (c: HcpCluster) => (c.status!.conditions![1]!.status = "True"),
    },
    {
      change: "the console URL",
      wakes: false,
      edit: (c: HcpCluster) => (c.status!.consoleURL = "https://console.example.com"),
    },
    {
      change: "Ready's message (pools quote it)",
      wakes: true,
      edit: (c: HcpCluster) => (c.status!.conditions![0]!.message = "next step"),
    },
    {
      change: "HostedClusterApplied appears",
      wakes: true,
      edit: (c: HcpCluster) => c.status!.conditions!.push(condition("HostedClusterApplied", "True")),
    },
    { change: "the spec (generation)", wakes: true, edit: (c: HcpCluster) => (c.metadata.generation = 2) },
    {
      change: "deletion",
      wakes: true,
      edit: (c: HcpCluster) => (c.metadata.deletionTimestamp = "2030-01-01T00:00:00Z"),
    },
    {
      change: "the control plane version",
      wakes: true,
      edit: (c: HcpCluster) => (c.status!.version = "4.19.8"),
    },
  ])("$change: wakes=$wakes", ({ edit, wakes }) => {
    const before = cluster(() => undefined);
    const after = cluster(edit);
    expect(!isDeepStrictEqual(clusterAsPoolsSeeIt(before), clusterAsPoolsSeeIt(after))).toBe(wakes);
  });
});
