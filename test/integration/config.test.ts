/**
 * The kustomize trees in config/ build with kubectl's kustomize and are accepted by a real
 * apiserver: the service-cluster install (CRDs, RBAC, Deployment) and the samples.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { clusterInfo, kubectlPath } from "../support/region.ts";

const exec = promisify(execFile);
const repo = fileURLToPath(new URL("../../", import.meta.url));

function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(kubectlPath(), ["--kubeconfig", clusterInfo("service").kubeconfigPath, ...args], { cwd: repo });
}

describe("config/", () => {
  afterAll(async () => {
    await kubectl(
      "delete",
      "--ignore-not-found",
      "-k",
      "config/samples",
      "-n",
      "config-samples",
      "--wait=false",
    );
    await kubectl(
      "delete",
      "--ignore-not-found",
      "namespace",
      "hcp-system",
      "config-samples",
      "--wait=false",
    );
    await kubectl("delete", "--ignore-not-found", "clusterrole,clusterrolebinding", "hcp-operators");
    // Other tests share this apiserver and run no controllers to remove the finalizers it adds.
    await kubectl(
      "delete",
      "--ignore-not-found",
      "mutatingadmissionpolicy,mutatingadmissionpolicybinding",
      "hcp-finalizers",
    );
  });

  it("builds the service-cluster install from the CRDs, RBAC and the Deployment", async () => {
    const { stdout } = await kubectl("kustomize", "config/service");
    for (const kind of [
      "CustomResourceDefinition",
      "Namespace",
      "ServiceAccount",
      "ClusterRole",
      "RoleBinding",
      "Deployment",
    ]) {
      expect(stdout).toContain(`kind: ${kind}`);
    }
    expect(stdout.match(/kind: CustomResourceDefinition/g)).toHaveLength(4);
  });

  it("applies the service-cluster install server-side", async () => {
    const { stdout } = await kubectl("apply", "--server-side", "--force-conflicts", "-k", "config/service");
    expect(stdout).toContain("deployment.apps/hcp-operators serverside-applied");
    expect(stdout).toContain("clusterrole.rbac.authorization.k8s.io/hcp-operators serverside-applied");
    expect(stdout).toContain(
      "mutatingadmissionpolicy.admissionregistration.k8s.io/hcp-finalizers serverside-applied",
    );
    // Gone before the samples: nothing here runs the controllers that would remove its finalizers.
    await kubectl("delete", "mutatingadmissionpolicy,mutatingadmissionpolicybinding", "hcp-finalizers");
  });

  it("applies the samples", async () => {
    await kubectl("create", "namespace", "config-samples");
    const { stdout } = await kubectl(
      "apply",
      "--server-side",
      // The ManagementClusters are cluster-scoped and shared with other tests' stacks.
      "--force-conflicts",
      "-n",
      "config-samples",
      "-k",
      "config/samples",
    );
    expect(stdout).toMatch(/hcpcluster\.hcp\.aro\.dev\/demo serverside-applied/);
    const { stdout: listed } = await kubectl("get", "hcpc,hnp", "-n", "config-samples", "-o", "name");
    expect(listed.trim().split("\n")).toHaveLength(3);
  });
});
