/**
 * The cluster controller killed (SIGKILL) between "Azure zone created" and "status written", then
 * restarted: it converges to Ready with exactly one of everything in Azure and one ManifestWork.
 * Killed between storing a cluster's signing key and publishing its issuer, it keeps that key.
 * The controllers run in a real operators process (operators/main.ts) with a failpoint armed; the
 * rest of the region (maestro-server, agents, HyperShift simulator) runs in this process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ArmEmulator } from "../../hack/harness/arm-emulator/index.ts";
import { lifecycleProcess } from "../../hack/harness/stack.ts";
import { HcpClusterResource, NodePoolResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource, type ManifestWork } from "../../operators/api/work/v1.ts";
import { SecretResource } from "../../operators/api/core.ts";
import { publicJwk } from "../../operators/cluster/signing-keyring.ts";
import { WORK_LABELS } from "../../operators/api/v1alpha1/labels.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { clusterInfo } from "../support/region.ts";
import { sampleCluster } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const operatorsMain = fileURLToPath(new URL("../../operators/main.ts", import.meta.url));
const service = clientFor("service");
const customer = `crash-${process.pid}`;
const namespace = `hcp-crash-${process.pid}`;

let arm: ArmEmulator;
let running: TestStack | undefined;
const children: ChildProcess[] = [];

/** An operators process running the lifecycle controllers against the region and the emulator. */
function startOperators(failpoints: string): {
  child: ChildProcess;
  exited: Promise<NodeJS.Signals | number | null>;
} {
  const operators = lifecycleProcess({
    serviceKubeconfig: clusterInfo("service").kubeconfigPath,
    namespace,
    httpAddress: "127.0.0.1:0",
    arm,
    storage: running!.storage,
  });
  const child = spawn(process.execPath, [operatorsMain, ...operators.args], {
    env: { ...process.env, ...operators.env, HCP_FAILPOINTS: failpoints },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal ?? code)),
  );
  return { child, exited };
}

/**
 * The operators process reconciles every cluster in the apiserver, and a failpoint reached for a
 * cluster an earlier test file left behind would kill it before this test's cluster got there. The
 * files run one after another, so what is left is nobody's: it goes, finalizers and all.
 */
async function removeLeftovers(): Promise<void> {
  for (const type of [NodePoolResource, HcpClusterResource]) {
    for (const o of (await service.listAll(type)).items) {
      const ref = { name: o.metadata.name ?? "", namespace: o.metadata.namespace ?? "" };
      if (o.metadata.finalizers?.length)
        await service.mergePatch(type, ref, { metadata: { finalizers: null } }).catch(() => undefined);
      await service.delete(type, ref).catch(() => undefined);
    }
  }
}

beforeAll(async () => {
  await removeLeftovers();
  running = await startTestStack("crash", {
    namespace,
    simulator: { provisionDelayMs: 500, deleteDelayMs: 200 },
    lifecycleControllers: false,
  });
  arm = running.arm;
  await service.create(namespaceType, { metadata: { name: customer } });
}, 120_000);

afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await running?.stop();
});

describe("cluster controller crash between storing the signing key and publishing it", () => {
  it("keeps the stored key after a restart: the HostedCluster and the JWKS carry that key", async () => {
    const cluster = sampleCluster();
    cluster.metadata = { name: "keyed", namespace: customer };
    cluster.spec.dns.baseDomainPrefix = `key${process.pid % 100000}`;
    delete cluster.spec.placement;

    const first = startOperators("cluster/after-signing-key-stored");
    await service.create(HcpClusterResource, cluster);
    expect(await first.exited).toBe("SIGKILL");
    const uid = (await service.find<HcpCluster>(HcpClusterResource, "keyed", customer))!.metadata.uid!;
    const secret = await service.find<KubeObject & { data?: Record<string, string> }>(
      SecretResource,
      `sa-signing-key-${uid}`,
      namespace,
    );
    const stored = secret?.data?.["key"];
    expect(stored).toBeDefined();
    // Killed before publishing: nothing is out there yet.
    expect(running!.storage.blobs()).toEqual([]);

    const second = startOperators("");
    await eventually(
      "Ready after the restart",
      async () =>
        (await service.find<HcpCluster>(HcpClusterResource, "keyed", customer))?.status?.conditions?.find(
          (c) => c.type === "Ready",
        )?.status === "True",
      90_000,
    );
    const key = Buffer.from(stored!, "base64").toString();
    const jwks = running!.storage.blobs().find((b) => b.name.endsWith(`${uid}/openid/v1/jwks`));
    expect(JSON.parse(jwks?.body ?? "{}")).toEqual({ keys: [publicJwk(key)] });
    const c = (await service.find<HcpCluster>(HcpClusterResource, "keyed", customer))!;
    const mgmt = clientFor(c.status!.managementCluster!);
    const onHost = await mgmt.get<KubeObject & { data?: Record<string, string> }>(
      SecretResource,
      "sa-signing-key",
      c.status!.hostedClusterNamespace,
    );
    expect(onHost.data?.["key"]).toBe(stored);

    await service.delete(HcpClusterResource, { name: "keyed", namespace: customer });
    await eventually(
      "deleted",
      async () => (await service.find(HcpClusterResource, "keyed", customer)) === undefined,
      90_000,
    );
    expect(running!.storage.blobs()).toEqual([]);
    expect(await service.find(SecretResource, `sa-signing-key-${uid}`, namespace)).toBeUndefined();
    // The next test arms its own failpoint in a process of its own: this one must not be around.
    second.child.kill("SIGTERM");
    await second.exited;
  });
});

describe("cluster controller crash between the Azure zone and the status write", () => {
  it("converges after a restart with no duplicate in Azure or in ManifestWorks", async () => {
    const cluster = sampleCluster();
    cluster.metadata = { name: "crashy", namespace: customer };
    cluster.spec.dns.baseDomainPrefix = `crash${process.pid % 100000}`;
    delete cluster.spec.placement;
    const zone = `${cluster.spec.dns.baseDomainPrefix}.hcp.example.com`;

    const first = startOperators("cluster/after-dns-zone");
    await service.create(HcpClusterResource, cluster);
    expect(await first.exited).toBe("SIGKILL");

    const zonePath = `/dnszones/${zone}`;
    const zonePuts = () =>
      arm
        .requests({ method: "PUT", path: zonePath })
        .filter((r) => !r.path.toLowerCase().includes(`${zonePath}/`.toLowerCase()));
    expect(zonePuts()).toHaveLength(1);
    const before = await service.find<HcpCluster>(HcpClusterResource, "crashy", customer);
    expect(before?.status?.conditions?.find((c) => c.type === "DnsZoneReady")).toBeUndefined();

    startOperators("");
    await eventually(
      "Ready after the restart",
      async () =>
        (await service.find<HcpCluster>(HcpClusterResource, "crashy", customer))?.status?.conditions?.find(
          (c) => c.type === "Ready",
        )?.status === "True",
      90_000,
    );
    // The restarted controller never saw the zone ready, so it creates on condition of absence:
    // ARM refuses that PUT (412) and the zone it made before the crash is read and kept.
    expect(zonePuts().map((r) => r.status)).toEqual([201, 412]);
    const ids = arm.resources().map((r) => r.id.toLowerCase());
    expect(ids.filter((id) => id.endsWith(`/dnszones/${zone}`.toLowerCase()))).toHaveLength(1);
    expect(ids.filter((id) => id.includes("/publicipaddresses/"))).toHaveLength(1);
    expect(ids.filter((id) => id.includes("/loadbalancers/"))).toHaveLength(1);
    const uid = (await service.find<HcpCluster>(HcpClusterResource, "crashy", customer))!.metadata.uid!;
    const works = await service.list<ManifestWork>(ManifestWorkResource, {
      labelSelector: `${WORK_LABELS.clusterUid}=${uid}`,
    });
    expect(works.items).toHaveLength(1);

    await service.delete(HcpClusterResource, { name: "crashy", namespace: customer });
    await eventually(
      "deleted",
      async () => (await service.find(HcpClusterResource, "crashy", customer)) === undefined,
      90_000,
    );
    expect(arm.resources().filter((r) => JSON.stringify(r.tags ?? {}).includes(uid))).toEqual([]);
  });
});
