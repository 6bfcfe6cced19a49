/**
 * The Maestro server's REST API (/api/maestro/v1): consumers, and resource bundles read and
 * deleted (they are created and updated over gRPC, see grpc.ts).
 */

export interface MaestroConsumer {
  id: string;
  name: string;
  labels?: Record<string, string>;
}

/** What GET /api/maestro/v1/resource-bundles/{id} returns (snake_case, as Maestro serves it). */
export interface ResourceBundle {
  id: string;
  kind: "ResourceBundle";
  href: string;
  name: string;
  consumer_name: string;
  version: number;
  created_at: string;
  updated_at: string;
  deleted_at?: string;
  metadata?: Record<string, unknown>;
  manifests?: object[];
  delete_option?: object;
  manifest_configs?: object[];
  /** ManifestBundleStatus as last reported by the agent: conditions, resourceStatus, ObservedVersion, SequenceID. */
  status?: {
    ObservedVersion?: number;
    SequenceID?: string;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
    resourceStatus?: object[];
  };
}

/** The REST calls, by the API's base URL (`<apiUrl>/api/maestro/v1`). */
export interface MaestroRestClient {
  /** POST /consumers. */
  createConsumer(name: string, labels?: Record<string, string>): Promise<MaestroConsumer>;
  listConsumers(): Promise<MaestroConsumer[]>;
  /** GET; undefined once the bundle is gone (404). */
  getBundle(id: string): Promise<ResourceBundle | undefined>;
  /** GET list; `search` is Maestro's TSL filter, e.g. "consumer_name = 'mgmt-1'". */
  listBundles(search?: string): Promise<ResourceBundle[]>;
  /** DELETE: marks the bundle deleting; it disappears once the agent confirms (condition Deleted). */
  deleteBundle(id: string): Promise<void>;
}

async function api<T>(
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; json: T | undefined }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as T) : undefined;
  return { status: res.status, json };
}

function apiError(what: string, status: number, json: unknown): Error {
  return new Error(`maestro ${what}: HTTP ${status} ${JSON.stringify(json)}`);
}

export function maestroRestClient(apiUrl: string): MaestroRestClient {
  const v1 = `${apiUrl}/api/maestro/v1`;
  return {
    async createConsumer(name, labels) {
      const { status, json } = await api<MaestroConsumer>("POST", `${v1}/consumers`, {
        name,
        ...(labels ? { labels } : {}),
      });
      if (status !== 201 || !json) throw apiError(`create consumer ${name}`, status, json);
      return json;
    },
    async listConsumers() {
      const { status, json } = await api<{ items: MaestroConsumer[] }>("GET", `${v1}/consumers?size=-1`);
      if (status !== 200 || !json) throw apiError("list consumers", status, json);
      return json.items;
    },
    async getBundle(id) {
      const { status, json } = await api<ResourceBundle>(
        "GET",
        `${v1}/resource-bundles/${encodeURIComponent(id)}`,
      );
      if (status === 404) return undefined;
      if (status !== 200 || !json) throw apiError(`get bundle ${id}`, status, json);
      return json;
    },
    async listBundles(search) {
      const query = new URLSearchParams({ size: "-1", ...(search ? { search } : {}) });
      const { status, json } = await api<{ items: ResourceBundle[] }>(
        "GET",
        `${v1}/resource-bundles?${query.toString()}`,
      );
      if (status !== 200 || !json) throw apiError("list bundles", status, json);
      return json.items;
    },
    async deleteBundle(id) {
      const { status, json } = await api<unknown>(
        "DELETE",
        `${v1}/resource-bundles/${encodeURIComponent(id)}`,
      );
      if (status !== 204 && status !== 404) throw apiError(`delete bundle ${id}`, status, json);
    },
  };
}
