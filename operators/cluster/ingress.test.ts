/**
 * The ingress phases of the cluster reconciler on a scripted infrastructure: what each ingress
 * type asks of Azure, where the records point, the release a Disabled ingress needs, what a
 * restart trusts from the status, and the console URL a cluster without an ingress does not have.
 */
import { describe, expect, it } from "vitest";
import type { HcpCluster, HcpClusterStatus, IngressType } from "../api/v1alpha1/index.ts";
import type { Release } from "../releases/catalog.ts";
import { silentLogger } from "../runtime/logger.ts";
import { ScriptedInfra, testContext } from "../../test/support/fakes.ts";
import { sampleCluster, sampleRegion } from "../../test/support/samples.ts";
import { reconcileIngress, reconcileRecords } from "./azure-phases.ts";
import { ClusterReconciler } from "./reconcile.ts";
import { newScope, type ClusterMemory, type ClusterReconcilerDeps, type ClusterScope } from "./scope.ts";
import { composeStatus, CONDITIONS } from "./status.ts";

const release = (version: string): Release => ({
  version,
  image: `quay.io/openshift-release-dev/ocp-release:${version}-multi`,
  channelGroups: ["stable"],
});

function cluster(type: IngressType, status?: HcpClusterStatus): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: "demo", namespace: "default", uid: "uid-demo", generation: 1 };
  c.spec.ingress = { type };
  if (status) c.status = status;
  return c;
}

/** A scope past the steps before the ingress (the release resolved, the zone delegated). */
function scopeFor(c: HcpCluster, version = "4.20.2"): { scope: ClusterScope; infra: ScriptedInfra } {
  const infra = new ScriptedInfra();
  const deps = { infra, region: sampleRegion() } as unknown as ClusterReconcilerDeps;
  const memory = new ClusterReconciler(deps).memory as ClusterMemory;
  const scope = newScope({ deps, memory, log: silentLogger, now: Date.now() }, c);
  scope.release = release(version);
  scope.facts.steps[CONDITIONS.DnsDelegated] = { state: "ready", message: "delegated" };
  return { scope, infra };
}

/** Ingress, then the records once HyperShift reports the API's endpoint. */
async function ingressAndRecords(scope: ClusterScope): Promise<void> {
  await reconcileIngress(testContext(), scope);
  scope.facts.hosted = { conditions: [], endpoint: { host: "api.demo.hcp.example.com", port: 443 } };
  await reconcileRecords(testContext(), scope);
}

describe("the ingress type decides what the cluster gets in Azure", () => {
  it("Public: one public IP for the API and the ingress, as before", async () => {
    const { scope, infra } = scopeFor(cluster("Public"));
    expect(scope.infraSpec).toMatchObject({ publicIpName: "demo-ingress-pip", ingress: { type: "Public" } });
    await ingressAndRecords(scope);
    expect(infra.recordAddresses).toEqual([{ api: "20.0.0.1", apps: "20.0.0.1" }]);
    expect(scope.facts.azure).toMatchObject({ apiIP: "20.0.0.1", ingressIP: "20.0.0.1" });
  });

  it("Private: the load balancer in the node subnet; *.apps at its private address, api at the API's public IP", async () => {
    const c = cluster("Private");
    const { scope, infra } = scopeFor(c);
    expect(scope.infraSpec).toMatchObject({
      publicIpName: "demo-api-pip",
      ingress: { type: "Private", subnetId: c.spec.platform.azure.subnetId },
    });
    await ingressAndRecords(scope);
    expect(infra.recordAddresses).toEqual([{ api: "20.0.0.1", apps: "10.0.0.4" }]);
    expect(scope.facts.azure).toMatchObject({ apiIP: "20.0.0.1", ingressIP: "10.0.0.4" });
  });

  it("Disabled: the API's public IP only, and no *.apps record", async () => {
    const { scope, infra } = scopeFor(cluster("Disabled"));
    expect(scope.infraSpec).toMatchObject({ publicIpName: "demo-api-pip", ingress: { type: "Disabled" } });
    await ingressAndRecords(scope);
    expect(infra.recordAddresses).toEqual([{ api: "20.0.0.1", apps: undefined }]);
    expect(scope.facts.azure).toEqual({ apiIP: "20.0.0.1" });
  });

  it("Disabled on a release before 4.20: nothing is made and the user is told what to change", async () => {
    const { scope, infra } = scopeFor(cluster("Disabled"), "4.19.7");
    const result = await reconcileIngress(testContext(), scope);
    expect(infra.calls.ensureIngress).toBeUndefined();
    expect(scope.facts.steps[CONDITIONS.IngressReady]).toEqual({
      state: "failed",
      reason: "IngressCannotBeDisabled",
      message:
        "spec.ingress.type Disabled needs OpenShift 4.20 or newer; spec.version.id 4.19 resolves to 4.19.7",
      userActionRequired: true,
    });
    expect(result.requeueAfterMs).toBeGreaterThan(0);
  });
});

describe("after a restart the addresses come from the status", () => {
  const ready = (type: string) => ({
    type,
    status: "True" as const,
    reason: "AsExpected",
    message: "as expected",
    observedGeneration: 1,
    lastTransitionTime: "2026-08-01T00:00:00Z",
  });

  it("a private ingress's two addresses are trusted, nothing is read", async () => {
    const status = {
      conditions: [ready(CONDITIONS.IngressReady)],
      azure: { apiIP: "20.60.0.9", ingressIP: "10.0.0.5" },
    };
    const { scope, infra } = scopeFor(cluster("Private", status));
    await reconcileIngress(testContext(), scope);
    expect(infra.calls.ensureIngress).toBeUndefined();
    expect([scope.apiIp, scope.ingressIp]).toEqual(["20.60.0.9", "10.0.0.5"]);
  });

  it("a status from before apiIP: the one public IP was the API's too", async () => {
    const status = { conditions: [ready(CONDITIONS.IngressReady)], azure: { ingressIP: "20.60.0.9" } };
    const { scope, infra } = scopeFor(cluster("Public", status));
    await reconcileIngress(testContext(), scope);
    expect(infra.calls.ensureIngress).toBeUndefined();
    expect([scope.apiIp, scope.ingressIp]).toEqual(["20.60.0.9", "20.60.0.9"]);
  });

  it("a private ingress without its recorded private address is read again", async () => {
    const status = { conditions: [ready(CONDITIONS.IngressReady)], azure: { apiIP: "20.60.0.9" } };
    const { scope, infra } = scopeFor(cluster("Private", status));
    await reconcileIngress(testContext(), scope);
    expect(infra.calls.ensureIngress).toBe(1);
  });
});

describe("the status of a cluster without an ingress", () => {
  it("has an API URL but no console URL: HyperShift disables the console with the ingress", () => {
    const urls = (type: IngressType) => {
      const { scope } = scopeFor(cluster(type));
      scope.facts.hosted = { conditions: [], endpoint: { host: "api.demo.hcp.example.com", port: 443 } };
      const status = composeStatus(scope.facts, { succeeded: true });
      return [status.apiURL, status.consoleURL];
    };
    expect(urls("Disabled")).toEqual(["https://api.demo.hcp.example.com:443", undefined]);
    expect(urls("Private")).toEqual([
      "https://api.demo.hcp.example.com:443",
      "https://console-openshift-console.apps.demo.hcp.example.com",
    ]);
  });
});
