/** The local control plane harness leaves nothing behind: not on stop, not when killed outright. */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isAlive } from "../../hack/harness/process.ts";
import { reapStaleRegions, startRegion } from "../../hack/harness/region.ts";
import { KubeClient, type KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, configMap, configMapType, eventually, namespaceType } from "../support/fixtures.ts";
import { kubeConfigAt, region } from "../support/region.ts";

const regionScript = fileURLToPath(new URL("../support/region-process.ts", import.meta.url));

describe("local control plane harness", () => {
  it("stops every process and removes its work dir", async () => {
    const local = await startRegion({ managementClusters: 1 });
    const pids = local.clusters.flatMap((c) => [
      c.apiServer?.process.pid ?? 0,
      c.controllerManager?.process.pid ?? 0,
    ]);
    expect(pids.every((p) => p > 0 && isAlive(p))).toBe(true);
    const mgmt = new KubeClient("mgmt-1", kubeConfigAt(local.clusters[1]!.kubeconfigPath));
    const version = await mgmt.raw<{ gitVersion: string }>("/version");
    expect(version.gitVersion).toBe("v1.36.3");
    await local.stop();
    expect(pids.filter(isAlive)).toEqual([]);
    expect(existsSync(local.workDir)).toBe(false);
  });

  it("reaps the processes and files of a harness that was killed outright", async () => {
    const child = spawn(process.execPath, [regionScript], { stdio: ["ignore", "pipe", "inherit"] });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`region process exited with ${code}`)));
    });
    const { workDir, pids } = JSON.parse(line) as { workDir: string; pids: number[] };
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    expect(pids.length).toBe(4); // etcd, one kube-apiserver, its controller manager and mosquitto, orphaned now
    expect(pids.every(isAlive)).toBe(true);

    await reapStaleRegions();
    // SIGKILL takes effect asynchronously: wait until each process is gone (or a zombie), with a
    // deadline; after a timeout the assertion below names the survivors.
    await eventually("the orphans to die", () => !pids.some(isAlive), 10_000).catch(() => undefined);
    expect(pids.filter(isAlive)).toEqual([]);
    expect(existsSync(workDir)).toBe(false);
    expect(existsSync(region().workDir)).toBe(true); // the live region of this test run is left alone
  });

  it("uses given kubeconfigs instead of starting clusters", async () => {
    const spec = region()
      .clusters.map((c) => `${c.name}=${c.kubeconfigPath}`)
      .join(",");
    process.env.HCP_KUBECONFIGS = spec;
    try {
      const external = await startRegion();
      expect(external.clusters.map((c) => [c.name, c.role, c.apiServer])).toEqual([
        ["service", "service", undefined],
        ["mgmt-1", "management", undefined],
        ["mgmt-2", "management", undefined],
      ]);
      await external.stop();
    } finally {
      delete process.env.HCP_KUBECONFIGS;
    }
  });
});

/** A finalizer of the test's own, to hold a dependent while its owner waits. */
const HOLD = "test.hcp.aro.dev/hold";

describe("kube-controller-manager in the local region", () => {
  const mgmt = clientFor("mgmt-1");
  const exists = async (t: typeof configMapType, name: string, namespace?: string): Promise<boolean> =>
    (await mgmt.find(t, name, namespace)) !== undefined;
  const ownedBy = (owner: KubeObject): KubeObject["metadata"]["ownerReferences"] => [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: owner.metadata.name ?? "",
      uid: owner.metadata.uid ?? "",
      blockOwnerDeletion: true,
    },
  ];

  it("deletes a namespace and what is in it instead of leaving it Terminating", async () => {
    const name = `kcm-ns-${Date.now().toString(36)}`;
    await mgmt.create(namespaceType, { metadata: { name } });
    await mgmt.create(configMapType, configMap(name, "inside", { a: "b" }));
    await mgmt.delete(namespaceType, { name });
    await eventually("the namespace to be gone", async () => !(await exists(namespaceType, name)), 60_000);
    expect(await exists(configMapType, "inside", name)).toBe(false);
  });

  it("collects dependents of a deleted owner, in the background and in the foreground", async () => {
    const ns = `kcm-gc-${Date.now().toString(36)}`;
    await mgmt.create(namespaceType, { metadata: { name: ns } });
    const gone = (name: string) => async () => !(await exists(configMapType, name, ns));
    try {
      const owner = await mgmt.create(configMapType, configMap(ns, "owner"));
      await mgmt.create(configMapType, {
        ...configMap(ns, "dependent"),
        metadata: { name: "dependent", namespace: ns, ownerReferences: ownedBy(owner) },
      });
      await mgmt.delete(configMapType, { name: "owner", namespace: ns });
      await eventually("the dependent of a deleted owner to be collected", gone("dependent"), 60_000);

      // Foreground: the owner stays (finalizer foregroundDeletion) until its dependents are gone.
      const parent = await mgmt.create(configMapType, configMap(ns, "parent"));
      const held = configMap(ns, "held");
      held.metadata = { name: "held", namespace: ns, ownerReferences: ownedBy(parent), finalizers: [HOLD] };
      await mgmt.create(configMapType, held);
      await mgmt.delete(
        configMapType,
        { name: "parent", namespace: ns },
        { propagationPolicy: "Foreground" },
      );
      await eventually("the dependent to be deleted", async () => {
        const dependent = await mgmt.find(configMapType, "held", ns);
        return dependent?.metadata.deletionTimestamp !== undefined;
      });
      const waiting = await mgmt.get(configMapType, "parent", ns);
      expect(waiting.metadata.finalizers).toContain("foregroundDeletion");
      await mgmt.mergePatch(
        configMapType,
        { name: "held", namespace: ns },
        { metadata: { finalizers: null } },
      );
      await eventually("the foreground owner to be gone", gone("parent"), 60_000);
    } finally {
      await mgmt.delete(namespaceType, { name: ns });
    }
  });
});
