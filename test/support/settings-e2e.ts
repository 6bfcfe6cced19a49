/**
 * What the end-to-end tests of cluster settings share: a test stack with an ARM frontend in front
 * of it and a registered subscription, a customer namespace for kubectl users, a Ready cluster's
 * HostedCluster read on its management cluster, and `kubectl apply` of an object.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { dump } from "js-yaml";
import { expect } from "vitest";
import { HostedClusterResource, type HostedCluster } from "../../operators/api/hypershift/v1beta1/index.ts";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { subscriptionNamespace } from "../../operators/frontend/mapping/names.ts";
import type { KubeClient, KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, namespaceType, scratchDir } from "./fixtures.ts";
import type { ArmClient } from "./frontend.ts";
import { startFrontendFixture, type FrontendFixture } from "./frontend-fixture.ts";
import { clusterInfo, kubectlPath } from "./region.ts";
import { startTestStack, type TestStack } from "./stack.ts";

const exec = promisify(execFile);
const service = clientFor("service");

export const TEST_TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
/** How long a cluster may take to become Ready in these tests. */
export const LIFECYCLE_MS = 90_000;

export interface SettingsE2e {
  running: TestStack;
  fixture: FrontendFixture;
  arm: ArmClient;
  scratch: { path: string; remove(): Promise<void> };
  /** Stops the frontend and the stack, removes the subscription's and the customer's namespaces. */
  stop(): Promise<void>;
}

export interface SettingsE2eOptions {
  /** Names the stack, the frontend and the scratch folder. */
  name: string;
  /** The subscription registered (with `features` as its registeredFeatures, if given). */
  sub: string;
  /** The namespace kubectl users create their clusters in. */
  customer: string;
  simulator?: { provisionDelayMs: number; deleteDelayMs: number };
  features?: Array<{ name: string; state: string }>;
  /** Runs once the stack is up, before the frontend starts (to set up the customer's Azure). */
  beforeFrontend?: (running: TestStack) => Promise<void>;
}

export async function startSettingsE2e(o: SettingsE2eOptions): Promise<SettingsE2e> {
  const scratch = await scratchDir(`cluster-${o.name}`);
  const running = await startTestStack(o.name, {
    simulator: o.simulator ?? { provisionDelayMs: 500, deleteDelayMs: 300 },
  });
  await o.beforeFrontend?.(running);
  const fixture = await startFrontendFixture({
    client: service,
    name: `${o.name}-e2e`,
    scratchPath: scratch.path,
    catalogNamespace: running.stack.namespace,
    headers: { "x-ms-home-tenant-id": TEST_TENANT },
  });
  const properties = o.features ? { registeredFeatures: o.features } : {};
  expect((await fixture.putSubscription(o.sub, "Registered", TEST_TENANT, properties)).status).toBe(200);
  await service.create(namespaceType, { metadata: { name: o.customer } });
  return {
    running,
    fixture,
    arm: fixture.arm,
    scratch,
    async stop() {
      await fixture.stop();
      await running.stop();
      for (const name of [subscriptionNamespace(o.sub), o.customer])
        await service.delete(namespaceType, { name }).catch(() => undefined);
      await scratch.remove();
    },
  };
}

export interface HostedClusterOf {
  cr: HcpCluster;
  /** The management cluster the control plane was placed on. */
  mgmt: KubeClient;
  /** The HostedCluster as found once the HcpCluster was Ready. */
  hc: HostedCluster;
  /** The HostedCluster as it is now. */
  read: () => Promise<HostedCluster | undefined>;
}

/** Waits for the HcpCluster to be Ready, then finds its HostedCluster on its management cluster. */
export async function hostedClusterOf(name: string, namespace: string): Promise<HostedClusterOf> {
  let cr: HcpCluster | undefined;
  await eventually(
    `HcpCluster ${namespace}/${name} Ready`,
    async () => {
      cr = await service.find<HcpCluster>(HcpClusterResource, name, namespace);
      return cr?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
    },
    LIFECYCLE_MS,
  );
  const ready = cr!;
  const mgmt = clientFor(ready.status!.managementCluster!);
  const read = () =>
    mgmt.find<HostedCluster>(
      HostedClusterResource,
      ready.spec.dns.baseDomainPrefix,
      ready.status!.hostedClusterNamespace,
    );
  const hc = await read();
  expect(hc, "the HostedCluster on the management cluster").toBeDefined();
  return { cr: ready, mgmt, hc: hc!, read };
}

/** The HostedCluster of a Ready HcpCluster. */
export async function readyHostedCluster(name: string, namespace: string): Promise<HostedCluster> {
  return (await hostedClusterOf(name, namespace)).hc;
}

/** `kubectl <args>` against the service cluster; resolves with its exit code and stderr, never throws. */
export async function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(kubectlPath(), [
      "--kubeconfig",
      clusterInfo("service").kubeconfigPath,
      ...args,
    ]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** `kubectl apply -f` of the object, written to the scratch folder; fails the test if kubectl does. */
export async function kubectlApply(scratchPath: string, obj: KubeObject): Promise<void> {
  const file = join(scratchPath, `apply-${Date.now()}-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, dump(obj));
  const applied = await kubectl("apply", "-f", file);
  expect(applied.code, applied.stderr).toBe(0);
}
