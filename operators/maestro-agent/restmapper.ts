/**
 * Maps a manifest's apiVersion and kind to the REST resource through the cluster's discovery, as
 * client-go's deferred RESTMapper does: one discovery document per group version, cached, and read
 * again once when a kind is missing (a CRD installed since).
 */
import type { KubeClient, ResourceType } from "../runtime/kube.ts";

interface APIResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

export class KindNotFoundError extends Error {
  constructor(apiVersion: string, kind: string) {
    super(`the management cluster serves no kind ${kind} in ${apiVersion}`);
    this.name = "KindNotFoundError";
  }
}

export class RestMapper {
  readonly #client: KubeClient;
  readonly #cache = new Map<string, Promise<APIResource[]>>();

  constructor(client: KubeClient) {
    this.#client = client;
  }

  async map(apiVersion: string, kind: string): Promise<ResourceType> {
    let found = (await this.#resources(apiVersion)).find((r) => r.kind === kind);
    if (!found) {
      this.#cache.delete(apiVersion);
      found = (await this.#resources(apiVersion)).find((r) => r.kind === kind);
    }
    if (!found) throw new KindNotFoundError(apiVersion, kind);
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    return {
      group: group ?? "",
      version: version ?? "",
      kind,
      plural: found.name,
      namespaced: found.namespaced,
    };
  }

  #resources(apiVersion: string): Promise<APIResource[]> {
    let cached = this.#cache.get(apiVersion);
    if (!cached) {
      const path = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      cached = this.#client
        .raw<{ resources?: APIResource[] }>(path)
        .then((doc) => (doc.resources ?? []).filter((r) => !r.name.includes("/")))
        .catch((err: unknown) => {
          this.#cache.delete(apiVersion);
          if ((err as { code?: number }).code === 404) return [];
          throw err;
        });
      this.#cache.set(apiVersion, cached);
    }
    return cached;
  }
}
