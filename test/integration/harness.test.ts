/** The local control plane harness leaves nothing behind: not on stop, not when killed outright. */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isAlive } from "../../hack/harness/process.ts";
import { reapStaleRegions, startRegion } from "../../hack/harness/region.ts";
import { KubeClient } from "../../operators/runtime/kube.ts";
import { kubeConfigAt, region } from "../support/region.ts";

const regionScript = fileURLToPath(new URL("../support/region-process.ts", import.meta.url));

describe("local control plane harness", () => {
  it("stops every process and removes its work dir", async () => {
    const local = await startRegion({ managementClusters: 1 });
    const pids = local.clusters.map((c) => c.apiServer?.process.pid ?? 0);
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
    expect(pids.length).toBe(3); // etcd, one kube-apiserver and mosquitto, orphaned now
    expect(pids.every(isAlive)).toBe(true);

    await reapStaleRegions();
    await new Promise((r) => setTimeout(r, 200));
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
