/** Installs CustomResourceDefinitions with server-side apply and waits until they are served. */
import type { KubeConfig } from "@kubernetes/client-node";
import { loadAll } from "js-yaml";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { KubeClient, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
import { waitFor } from "./ports.ts";

export const crdType: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  namespaced: false,
};

interface CrdStatus {
  status?: { conditions?: Array<{ type: string; status: string }> };
}

export async function readCrds(files: string[]): Promise<KubeObject[]> {
  const docs: KubeObject[] = [];
  for (const file of files) {
    // Plain YAML parsing: client-node's loadAllYaml renames keys to its model names (x-kubernetes-* → x_kubernetes_*).
    const parsed = loadAll(await readFile(file, "utf8")) as Array<KubeObject | null>;
    for (const doc of parsed) if (doc?.kind === "CustomResourceDefinition") docs.push(doc);
  }
  return docs;
}

export async function crdFilesIn(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names
    .filter((n) => n.endsWith(".yaml") || n.endsWith(".yml"))
    .sort()
    .map((n) => join(dir, n));
}

export async function installCrds(kc: KubeConfig, files: string[]): Promise<void> {
  const client = new KubeClient("crd-install", kc);
  const crds = await readCrds(files);
  for (const crd of crds) {
    // Upstream feature-gate bookkeeping annotations mean nothing to a plain apiserver.
    delete crd.metadata.annotations;
    await client.apply(crdType, crd, { fieldManager: "hcp-harness", force: true });
  }
  for (const crd of crds) {
    const name = crd.metadata.name ?? "";
    await waitFor(
      `CRD ${name} established`,
      async () => {
        const current = await client.get<KubeObject & CrdStatus>(crdType, name);
        return (current.status?.conditions ?? []).some(
          (c) => c.type === "Established" && c.status === "True",
        );
      },
      { timeoutMs: 30_000 },
    );
  }
}
