/**
 * The settings a user can give a cluster reach the HostedCluster on the management cluster, read
 * there: a cluster created through the ARM frontend (2026-06-30-preview) and one created with
 * `kubectl apply` of an HcpCluster carry the same settings, each under HyperShift's own field,
 * and an updatable one (authorized CIDRs) follows a PATCH.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostedClusterResource, type HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { clusterCRName, subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import { clientFor, eventually } from "../support/fixtures.ts";
import { clusterBody, clusterPath, type ArmClient } from "../support/frontend.ts";
import { sampleCluster } from "../support/samples.ts";
import {
  kubectlApply,
  LIFECYCLE_MS,
  readyHostedCluster,
  startSettingsE2e,
  type SettingsE2e,
} from "../support/settings-e2e.ts";

const service = clientFor("service");
const sub = randomUUID();
const armNamespace = subscriptionNamespace(sub);
const customer = `settings-${process.pid}`;
const rg = "E2E-Settings";
const armPrefix = `st${process.pid % 100000}`;
const kubectlPrefix = `sk${process.pid % 100000}`;

let e2e: SettingsE2e | undefined;
let arm: ArmClient;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

/** What both clusters are given, in ARM's words. */
const ARM_SETTINGS = {
  api: { visibility: "Public", authorizedCidrs: ["10.0.0.0/8", "203.0.113.7", "2001:db8::/32"] },
  cryptoRestrictions: "FIPS",
  clusterImageRegistry: { state: "Disabled" },
  autoscaling: {
    maxNodesTotal: 50,
    maxPodGracePeriodSeconds: 300,
    maxNodeProvisionTimeSeconds: 900,
    podPriorityThreshold: -5,
  },
  imageDigestMirrors: [
    { source: "quay.io/openshift-release-dev/ocp-release", mirrors: ["mirror.example.com/ocp/release"] },
    { source: "registry.redhat.io", mirrors: ["a.example.com/rh", "b.example.com/rh"] },
  ],
};

/** The same settings in the HcpCluster's words. */
function withSettings(c: HcpCluster): HcpCluster {
  c.spec.api = { visibility: "Public", authorizedCIDRs: ["10.0.0.0/8", "203.0.113.7", "2001:db8::/32"] };
  c.spec.fips = true;
  c.spec.clusterImageRegistry = { state: "Disabled" };
  c.spec.imageDigestMirrors = structuredClone(ARM_SETTINGS.imageDigestMirrors);
  c.spec.autoscaling = { ...ARM_SETTINGS.autoscaling };
  return c;
}

/** What HyperShift is given for them. */
function expectSettings(hc: HostedCluster): void {
  expect(hc.spec.networking.apiServer?.allowedCIDRBlocks).toEqual([
    "10.0.0.0/8",
    "203.0.113.7/32",
    "2001:db8::/32",
  ]);
  expect(hc.spec.fips).toBe(true);
  expect(hc.spec.capabilities?.disabled).toEqual(["ImageRegistry"]);
  expect(hc.spec.imageContentSources).toEqual(ARM_SETTINGS.imageDigestMirrors);
  expect(hc.spec.autoscaling).toMatchObject({
    maxNodesTotal: 50,
    maxPodGracePeriod: 300,
    maxNodeProvisionTime: "900s",
    podPriorityThreshold: -5,
  });
}

beforeAll(async () => {
  e2e = await startSettingsE2e({ name: "settings", sub, customer });
  arm = e2e.arm;
}, 120_000);

afterAll(async () => {
  await e2e?.stop();
});

describe("cluster settings reach the HostedCluster", () => {
  const path = clusterPath(sub, rg, "Settings");

  it("a cluster created through ARM: the HostedCluster carries them and GET returns them", async () => {
    const body = clusterBody(sub, { prefix: armPrefix }) as Json;
    Object.assign(body["properties"] as Json, structuredClone(ARM_SETTINGS));
    const r = await arm.send("PUT", path, { body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const op = await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250);
    expect(op, JSON.stringify(op)).toMatchObject({ status: "Succeeded" });

    expectSettings(await readyHostedCluster(clusterCRName(rg, "Settings"), armNamespace));
    const got = (await arm.send("GET", path)).body as Json;
    expect(got.properties).toMatchObject(ARM_SETTINGS);
  });

  it("a cluster created with kubectl apply: the HostedCluster carries them", async () => {
    const c = withSettings(sampleCluster());
    c.metadata = { name: "settings", namespace: customer };
    c.spec.dns.baseDomainPrefix = kubectlPrefix;
    delete c.spec.placement;
    await kubectlApply(e2e!.scratch.path, c);
    expectSettings(await readyHostedCluster("settings", customer));
  });

  it("a PATCH of the updatable settings reaches the HostedCluster; clearing the CIDRs opens the API again", async () => {
    const cr = await service.get<HcpCluster>(HcpClusterResource, clusterCRName(rg, "Settings"), armNamespace);
    const mgmt = clientFor(cr.status!.managementCluster!);
    const hostedCluster = () =>
      mgmt.find<HostedCluster>(
        HostedClusterResource,
        cr.spec.dns.baseDomainPrefix,
        cr.status!.hostedClusterNamespace,
      );
    const blocks = async () => (await hostedCluster())?.spec.networking.apiServer?.allowedCIDRBlocks;
    const mirrors = [{ source: "registry.redhat.io", mirrors: ["c.example.com/rh"] }];

    const patched = await arm.send("PATCH", path, {
      body: {
        properties: {
          api: { authorizedCidrs: ["198.51.100.0/24"] },
          autoscaling: { maxNodesTotal: 80 },
          imageDigestMirrors: mirrors,
        },
      },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(202);
    expect((await arm.poll(patched.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250)).status).toBe(
      "Succeeded",
    );
    await eventually(
      "the new list on the HostedCluster",
      async () => JSON.stringify(await blocks()) === '["198.51.100.0/24"]',
      LIFECYCLE_MS,
    );
    const hc = await hostedCluster();
    expect(hc?.spec.autoscaling).toMatchObject({ maxNodesTotal: 80, maxPodGracePeriod: 300 });
    expect(hc?.spec.imageContentSources).toEqual(mirrors);

    const cleared = await arm.send("PATCH", path, {
      body: { properties: { api: { authorizedCidrs: null } } },
    });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(202);
    expect((await arm.poll(cleared.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250)).status).toBe(
      "Succeeded",
    );
    await eventually(
      "no list on the HostedCluster",
      async () => (await blocks()) === undefined,
      LIFECYCLE_MS,
    );
    expect(((await arm.send("GET", path)).body as Json).properties.api.authorizedCidrs).toBeUndefined();
  });

  it("an entry HyperShift could not take is refused, naming the ARM field", async () => {
    const r = await arm.send("PATCH", path, {
      body: { properties: { api: { authorizedCidrs: ["::ffff:10.0.0.1"] } } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(JSON.stringify(r.body)).toContain("properties.api.authorizedCidrs[0]");
    expect(JSON.stringify(r.body)).not.toContain("spec.");
  });

  it("changing a create-only setting is refused, naming it", async () => {
    for (const [properties, target] of [
      [{ cryptoRestrictions: "None" }, "properties.cryptoRestrictions"],
      [{ clusterImageRegistry: { state: "Enabled" } }, "properties.clusterImageRegistry.state"],
    ] as const) {
      const r = await arm.send("PATCH", path, { body: { properties } });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(JSON.stringify(r.body)).toContain(target);
    }
  });
});
