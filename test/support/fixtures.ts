/** Small helpers shared by integration tests. */
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { ConfigMapResource, NamespaceResource, SecretResource } from "../../operators/api/core.ts";
import { KubeClient, type KubeObject, type ResourceType } from "../../operators/runtime/kube.ts";
import { kubeConfigFor, region } from "./region.ts";

export const namespaceType: ResourceType = NamespaceResource;
export const configMapType: ResourceType = ConfigMapResource;
export const secretType: ResourceType = SecretResource;

export function clientFor(cluster: string): KubeClient {
  return new KubeClient(cluster, kubeConfigFor(cluster));
}

let counter = 0;

/** Creates a uniquely named namespace; returns its name and a cleanup function. */
export async function tempNamespace(
  client: KubeClient,
  prefix = "t",
): Promise<{ name: string; remove(): Promise<void> }> {
  const name = `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter++}`;
  await client.create(namespaceType, { metadata: { name } });
  return { name, remove: async () => void (await client.delete(namespaceType, { name })) };
}

/** A scratch directory under the region's work dir (removed with the region). */
export async function scratchDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(region().workDir, `${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export function configMap(namespace: string, name: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

/** Polls until the predicate holds; fails with `what` after the timeout. */
export async function eventually(
  what: string,
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
