/**
 * `locations/{loc}/hcpOpenShiftVersions[/{v}]` from the release catalog ConfigMap the controllers
 * read (operators/releases/catalog.ts), and the version checks of create and update: a version the
 * catalog does not offer is refused with a 400 rather than accepted and failed later.
 */
import type { VersionSpec } from "../../api/v1alpha1/meta.ts";
import { CATALOG_CONFIGMAP, CATALOG_KEY, ReleaseCatalog, configMapType } from "../../releases/catalog.ts";
import { Informer } from "../../runtime/informer.ts";
import type { KubeClient, KubeObject } from "../../runtime/kube.ts";
import { CloudError, CODES, type FieldError } from "../errors.ts";
import type { ArmRequest, Reply } from "../arm-request.ts";
import { PROVIDER } from "../resource-id.ts";
import { isObject, shorten } from "../api/json.ts";

export const VERSION_TYPE = `${PROVIDER}/locations/hcpOpenShiftVersions`;

export interface Catalog {
  catalog: ReleaseCatalog;
}

/**
 * Reads the catalog ConfigMap through a watch on that one object (direct GETs until it has
 * synced), parsing it again only when its resourceVersion changes.
 */
export class CatalogReader {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly informer: Informer<KubeObject>;
  #cached: { rv: string; catalog: Catalog | undefined } | undefined;

  constructor(client: KubeClient, namespace: string) {
    this.#client = client;
    this.#namespace = namespace;
    this.informer = new Informer<KubeObject>({
      client,
      type: configMapType,
      namespace,
      fieldSelector: `metadata.name=${CATALOG_CONFIGMAP}`,
    });
  }

  async read(): Promise<Catalog | undefined> {
    const cm = this.informer.hasSynced()
      ? this.informer.get(this.#namespace, CATALOG_CONFIGMAP)
      : await this.#client.find<KubeObject>(configMapType, CATALOG_CONFIGMAP, this.#namespace);
    if (!cm) return undefined;
    const rv = cm.metadata.resourceVersion ?? "";
    if (this.#cached?.rv !== rv) this.#cached = { rv, catalog: parseCatalog(cm) };
    return this.#cached.catalog;
  }
}

function parseCatalog(cm: KubeObject): Catalog | undefined {
  const data = cm["data"];
  const yaml = isObject(data) ? data[CATALOG_KEY] : undefined;
  if (typeof yaml !== "string") return undefined;
  return { catalog: ReleaseCatalog.parse(yaml) };
}

/** A field error when the catalog exists and does not offer the version. */
export function checkVersion(catalog: Catalog | undefined, spec: VersionSpec, target: string): FieldError[] {
  if (!catalog) return [];
  const r = catalog.catalog.resolve(spec);
  return r.ok ? [] : [{ target, message: r.message }];
}

/** The newest major.minor of a channel group, for 2024-06-10-preview requests without a version. */
export function defaultVersion(catalog: Catalog | undefined, channelGroup = "stable"): string | undefined {
  const newest = catalog?.catalog.releases.find((r) => r.channelGroups.some((g) => g === channelGroup));
  return newest?.version.split(".").slice(0, 2).join(".");
}

function versionResource(req: ArmRequest, c: Catalog, version: string): Record<string, unknown> | undefined {
  const release = c.catalog.releases.find((r) => r.version === version);
  if (!release) return undefined;
  const { subscriptionId, location } = req.params;
  const eol = release.endOfLifeTimestamp;
  return {
    id: `/subscriptions/${subscriptionId}/providers/${PROVIDER}/locations/${location}/hcpOpenShiftVersions/${version}`,
    name: version,
    type: VERSION_TYPE,
    properties: {
      channelGroup: release.channelGroups[0] ?? "stable",
      enabled: true,
      ...(eol ? { endOfLifeTimestamp: eol } : {}),
    },
  };
}

export async function getVersions(reader: CatalogReader, req: ArmRequest): Promise<Reply> {
  const catalog = await reader.read();
  const wanted = req.params["version"];
  if (wanted === undefined) {
    const value = catalog
      ? catalog.catalog.releases.map((r) => versionResource(req, catalog, r.version))
      : [];
    return { status: 200, body: { value } };
  }
  const found = catalog ? versionResource(req, catalog, wanted) : undefined;
  if (!found)
    throw new CloudError(404, {
      code: CODES.ResourceNotFound,
      message: `The OpenShift version '${shorten(wanted)}' is not offered in location '${shorten(req.params["location"] ?? "")}'.`,
    });
  return { status: 200, body: found };
}
