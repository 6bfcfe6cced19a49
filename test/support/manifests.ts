/** Manifests and namespaces the transport tests put into ManifestWorks. */
import type { Manifest } from "../../operators/api/work/v1.ts";
import type { KubeClient } from "../../operators/runtime/kube.ts";
import { namespaceType } from "./fixtures.ts";

/** Creates the namespace unless it exists. */
export async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  await client.createIfAbsent(namespaceType, { metadata: { name } });
}

export function configMapManifest(namespace: string, name: string, data: Record<string, string>): Manifest {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

/** A Deployment no controller runs here: tests write its status themselves. */
export function deploymentManifest(namespace: string, name: string, replicas = 2): Manifest {
  const labels = { app: name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: "c", image: "registry.example/app:1" }] },
      },
    },
  };
}
