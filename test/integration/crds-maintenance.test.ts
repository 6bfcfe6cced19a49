/**
 * HcpCluster spec.maintenance against the service cluster's real kube-apiserver: windows and
 * freezes that can open are taken (the time zone defaulted to UTC), and a window that never opens,
 * an unknown time zone or a freeze without end is refused naming the field. The time-zone list in
 * the CRD agrees with what the controllers' clock (Node's Intl) knows.
 */
import { load } from "js-yaml";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HcpClusterResource,
  type HcpCluster,
  type MaintenanceSpec,
} from "../../operators/api/v1alpha1/index.ts";
import { isTimeZone } from "../../operators/hcp/maintenance-window.ts";
import { KubeApiError } from "../../operators/runtime/kube.ts";
import { clientFor, tempNamespace } from "../support/fixtures.ts";

const client = clientFor("service");
const sampleText = await readFile(new URL("../../config/samples/hcpcluster.yaml", import.meta.url), "utf8");
let ns: { name: string; remove(): Promise<void> };
let counter = 0;

beforeAll(async () => {
  ns = await tempNamespace(client, "maint");
});
afterAll(async () => {
  const left = await client.list<HcpCluster>(HcpClusterResource, { namespace: ns.name });
  for (const c of left.items)
    await client.delete(HcpClusterResource, { name: c.metadata.name ?? "", namespace: ns.name });
  await ns.remove();
});

function clusterWith(maintenance: MaintenanceSpec): HcpCluster {
  const c = load(sampleText) as HcpCluster;
  c.metadata = { name: `maint-${counter++}`, namespace: ns.name };
  c.spec.dns.baseDomainPrefix = `m${counter}`;
  c.spec.maintenance = maintenance;
  return c;
}

async function refusal(maintenance: MaintenanceSpec): Promise<string> {
  const err = await client.create(HcpClusterResource, clusterWith(maintenance)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the apiserver accepted the maintenance spec").toBeInstanceOf(KubeApiError);
  expect((err as KubeApiError).code).toBe(422);
  return (err as KubeApiError).message;
}

describe("HcpCluster spec.maintenance", () => {
  it("takes weekly windows past midnight and freezes, and defaults the time zone to UTC", async () => {
    const created = await client.create(
      HcpClusterResource,
      clusterWith({
        windows: [
          { days: ["Saturday", "Sunday"], start: "02:00", end: "06:00" },
          { days: ["Wednesday"], start: "23:00", end: "01:00" },
        ],
        freezes: [{ start: "2026-12-20T00:00:00Z", end: "2027-01-04T00:00:00Z", reason: "year end" }],
      }),
    );
    expect(created.spec.maintenance?.timeZone).toBe("UTC");
    const berlin = await client.create(HcpClusterResource, clusterWith({ timeZone: "Asia/Kolkata" }));
    expect(berlin.spec.maintenance?.timeZone).toBe("Asia/Kolkata");
  });

  it("refuses a window that never opens or is too short to work in", async () => {
    expect(await refusal({ windows: [{ days: ["Monday"], start: "02:00", end: "02:00" }] })).toContain(
      "spec.maintenance.windows: the window 02:00-02:00 is shorter than an hour",
    );
    expect(await refusal({ windows: [{ days: ["Monday"], start: "23:30", end: "00:10" }] })).toContain(
      "the window 23:30-00:10 is shorter than an hour",
    );
    expect(await refusal({ windows: [{ days: [], start: "02:00", end: "06:00" }] })).toContain(
      "spec.maintenance.windows[0].days",
    );
    expect(await refusal({ windows: [{ days: ["Monday"], start: "2am", end: "06:00" }] })).toContain(
      'spec.maintenance.windows[].start must be a time HH:MM such as 02:00, not "2am"',
    );
  });

  it("refuses a time zone the controllers cannot read, naming it", async () => {
    expect(await refusal({ timeZone: "Mars/Olympus" })).toContain(
      'spec.maintenance.timeZone "Mars/Olympus" is not an IANA time zone',
    );
  });

  it("refuses a freeze that ends before it starts or lasts more than 31 days", async () => {
    expect(
      await refusal({ freezes: [{ start: "2027-01-04T00:00:00Z", end: "2026-12-20T00:00:00Z" }] }),
    ).toContain("spec.maintenance.freezes[] must end after it starts");
    expect(
      await refusal({ freezes: [{ start: "2026-12-01T00:00:00Z", end: "2027-06-01T00:00:00Z" }] }),
    ).toContain("spec.maintenance.freezes[] may last at most 31 days");
  });

  it("lists only time zones Node knows, and every zone Node calls canonical", async () => {
    const crd = await readFile(new URL("../../crds/hcp.aro.dev_hcpclusters.yaml", import.meta.url), "utf8");
    const rule = /self in \[([^\]]*)\]/.exec(crd)?.[1] ?? "";
    const listed = [...rule.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
    expect(listed.length).toBeGreaterThan(400);
    expect(listed.filter((z) => !isTimeZone(z))).toEqual([]);
    expect(Intl.supportedValuesOf("timeZone").filter((z) => !listed.includes(z))).toEqual([]);
  });
});
