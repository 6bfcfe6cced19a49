/**
 * Preview features through the ARM frontend, gated by the subscription's registered features as
 * ARO HCP gates them: a subscription without ExperimentalReleaseFeatures is refused a gated channel
 * group and the experimental tags, naming the feature; one with it gets them, and the
 * single-replica tag reaches the HostedCluster on the management cluster, as the same setting does
 * through `kubectl apply`.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { clusterCRName, subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import {
  EXPERIMENTAL_RELEASE_FEATURES,
  SINGLE_REPLICA_TAG,
} from "../../operators/frontend/checks/preview-features.ts";
import { clientFor, namespaceType } from "../support/fixtures.ts";
import { clusterBody, clusterPath, type ArmClient } from "../support/frontend.ts";
import { sampleCluster } from "../support/samples.ts";
import {
  kubectl,
  kubectlApply,
  LIFECYCLE_MS,
  readyHostedCluster,
  startSettingsE2e,
  TEST_TENANT,
  type SettingsE2e,
} from "../support/settings-e2e.ts";

const service = clientFor("service");
const plainSub = randomUUID();
const enrolledSub = randomUUID();
const customer = `preview-${process.pid}`;
const rg = "E2E-Preview";
const pid = process.pid % 100000;

let e2e: SettingsE2e | undefined;
let arm: ArmClient;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

/** A cluster body with the given channel group and tags. */
function body(
  sub: string,
  prefix: string,
  over: { channelGroup?: string; tags?: Record<string, string> },
): Json {
  const b = clusterBody(sub, { prefix, version: "4.20" }) as Json;
  if (over.channelGroup) b["properties"].version.channelGroup = over.channelGroup;
  if (over.tags) b["tags"] = { ...b["tags"], ...over.tags };
  return b;
}

/** The CloudError's details (or itself) as target → message. */
function refusals(r: { status: number; body: unknown }): Record<string, string> {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  const error = (r.body as Json)["error"] as Json;
  const details = (error["details"] as Json[] | undefined) ?? [error];
  return Object.fromEntries(details.map((d) => [String(d["target"]), String(d["message"])]));
}

beforeAll(async () => {
  e2e = await startSettingsE2e({
    name: "preview",
    sub: enrolledSub,
    customer,
    features: [
      { name: "Microsoft.Compute/EncryptionAtHost", state: "Registered" },
      { name: EXPERIMENTAL_RELEASE_FEATURES.toLowerCase(), state: "Registered" },
    ],
  });
  arm = e2e.arm;
  expect((await e2e.fixture.putSubscription(plainSub, "Registered", TEST_TENANT)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await e2e?.stop();
  await service.delete(namespaceType, { name: subscriptionNamespace(plainSub) }).catch(() => undefined);
});

describe("preview features need the subscription's registered feature", () => {
  it("without it, a gated channel group and an experimental tag are refused, naming the feature, and nothing is written", async () => {
    const path = clusterPath(plainSub, rg, "Plain");
    const errors = refusals(
      await arm.send("PUT", path, {
        body: body(plainSub, `pp${pid}`, {
          channelGroup: "candidate",
          tags: { [SINGLE_REPLICA_TAG]: "true" },
        }),
      }),
    );
    expect(errors["properties.version.channelGroup"]).toContain(EXPERIMENTAL_RELEASE_FEATURES);
    expect(errors[`tags[${SINGLE_REPLICA_TAG}]`]).toContain(EXPERIMENTAL_RELEASE_FEATURES);
    const cr = await service.find(
      HcpClusterResource,
      clusterCRName(rg, "Plain"),
      subscriptionNamespace(plainSub),
    );
    expect(cr).toBeUndefined();
  });

  it("with it, a candidate single-replica cluster is created and HyperShift is told so", async () => {
    const path = clusterPath(enrolledSub, rg, "Enrolled");
    const r = await arm.send("PUT", path, {
      body: body(enrolledSub, `pe${pid}`, {
        channelGroup: "candidate",
        tags: { [SINGLE_REPLICA_TAG]: "true" },
      }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const op = await arm.poll(r.headers["azure-asyncoperation"]!, LIFECYCLE_MS, 250);
    expect(op, JSON.stringify(op)).toMatchObject({ status: "Succeeded" });

    const hc = await readyHostedCluster(clusterCRName(rg, "Enrolled"), subscriptionNamespace(enrolledSub));
    expect(hc.spec.controllerAvailabilityPolicy).toBe("SingleReplica");
    expect(hc.spec.channel).toBe("candidate-4.20");
    const got = (await arm.send("GET", path)).body as Json;
    expect(got["tags"]).toMatchObject({ [SINGLE_REPLICA_TAG]: "true" });
    expect(got["properties"].version).toMatchObject({ channelGroup: "candidate" });
  });

  it("the replica count is read at creation only, and an unknown experimental tag is refused", async () => {
    const path = clusterPath(enrolledSub, rg, "Enrolled");
    const flipped = refusals(
      await arm.send("PATCH", path, { body: { tags: { [SINGLE_REPLICA_TAG]: "false" } } }),
    );
    expect(flipped[`tags[${SINGLE_REPLICA_TAG}]`]).toContain("creation only");
    const unknown = "aro-hcp.experimental.cluster.size-override";
    const refused = refusals(await arm.send("PATCH", path, { body: { tags: { [unknown]: "true" } } }));
    expect(refused[`tags[${unknown}]`]).toContain("not an experimental tag");
    const cr = await service.get<HcpCluster>(
      HcpClusterResource,
      clusterCRName(rg, "Enrolled"),
      subscriptionNamespace(enrolledSub),
    );
    expect(cr.spec.controllerAvailabilityPolicy).toBe("SingleReplica");
  });

  it("kubectl users set spec.controllerAvailabilityPolicy; the API server keeps it as created", async () => {
    const c = sampleCluster();
    c.metadata = { name: "single", namespace: customer };
    c.spec.dns.baseDomainPrefix = `pk${pid}`;
    c.spec.controllerAvailabilityPolicy = "SingleReplica";
    // Its own managed resource group: clusters other tests leave behind are reconciled here too.
    c.spec.platform.azure.managedResourceGroup = `preview-${pid}-managed`;
    delete c.spec.placement;
    await kubectlApply(e2e!.scratch.path, c);
    expect((await readyHostedCluster("single", customer)).spec.controllerAvailabilityPolicy).toBe(
      "SingleReplica",
    );

    const patch = JSON.stringify({ spec: { controllerAvailabilityPolicy: "HighlyAvailable" } });
    const refused = await kubectl(
      "-n",
      customer,
      "patch",
      "hcpcluster",
      "single",
      "--type=merge",
      "-p",
      patch,
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("spec.controllerAvailabilityPolicy is immutable");
  });
});
