/**
 * Applies one manifest of a work by its update strategy, as OCM's agent does, with a strategy map
 * instead of branches: `Update` (the default) and `ServerSideApply` are server-side applies under a
 * `work-agent` field manager (Update forces, ServerSideApply forces only when asked); `CreateOnly`
 * creates once and never touches the object again; `ReadOnly` only reads it for status. Kinds
 * outside the allow-list are refused before anything is sent.
 */
import type {
  Manifest,
  ManifestConfigOption,
  ManifestResourceMeta,
  UpdateStrategy,
  UpdateStrategyType,
} from "../api/work/v1.ts";
import { errorMessage, isConflict } from "../runtime/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../runtime/kube.ts";
import type { RestMapper } from "./restmapper.ts";

export const DEFAULT_FIELD_MANAGER = "work-agent";

/** Why a manifest is not applied; becomes its Applied=False condition. */
export interface ApplyFailure {
  reason: "AppliedManifestFailed" | "ManifestKindNotAllowed";
  message: string;
}

export interface ManifestOutcome {
  meta: ManifestResourceMeta;
  strategy: UpdateStrategyType;
  config?: ManifestConfigOption;
  type?: ResourceType;
  /** The object as the cluster has it after the apply (or read); undefined if it does not exist. */
  object?: KubeObject;
  failure?: ApplyFailure;
}

/**
 * Kinds the agent may apply: `Kind` (core group), `Kind.group`, `*.group` or `*`. The default
 * matches the agent's ClusterRole in config/bases/agent/rbac.
 */
export class KindAllowList {
  readonly #entries: Set<string>;
  constructor(entries: readonly string[]) {
    this.#entries = new Set(entries);
  }
  allows(group: string, kind: string): boolean {
    const e = this.#entries;
    return e.has("*") || e.has(group ? `${kind}.${group}` : kind) || (group !== "" && e.has(`*.${group}`));
  }
  toString(): string {
    return [...this.#entries].join(", ");
  }
}

export const DEFAULT_ALLOWED_KINDS = [
  "Namespace",
  "ConfigMap",
  "Secret",
  "ServiceAccount",
  "Deployment.apps",
  "*.hypershift.openshift.io",
  // Break-glass credentials: a CSR for a HyperShift signer and HyperShift's approval or revocation.
  "CertificateSigningRequest.certificates.k8s.io",
  "*.certificates.hypershift.openshift.io",
  // A cluster's VNet integration subnet (Swift): its PodNetwork and the control plane's instance of it.
  "PodNetwork.multitenancy.acn.azure.com",
  "PodNetworkInstance.multitenancy.acn.azure.com",
  // A cluster's backup schedule in Velero's namespace, and a restore from one of its backups.
  "Schedule.velero.io",
  "Restore.velero.io",
] as const;

function configFor(
  configs: ManifestConfigOption[] | undefined,
  meta: ManifestResourceMeta,
): ManifestConfigOption | undefined {
  return configs?.find((c) => {
    const id = c.resourceIdentifier;
    return (
      (id.group ?? "") === (meta.group ?? "") &&
      id.resource === meta.resource &&
      id.name === meta.name &&
      (id.namespace ?? "") === (meta.namespace ?? "")
    );
  });
}

/** The calls the strategies make on the management cluster. */
export type ManifestClient = Pick<KubeClient, "apply" | "find" | "create">;
/** Maps apiVersion and kind to the REST resource (see RestMapper). */
export type KindMapper = Pick<RestMapper, "map">;

type StrategyApplier = (
  client: ManifestClient,
  type: ResourceType,
  manifest: KubeObject,
  s: UpdateStrategy | undefined,
) => Promise<KubeObject | undefined>;

const strategies: Record<UpdateStrategyType, StrategyApplier> = {
  Update: (client, type, m) => client.apply(type, m, { fieldManager: DEFAULT_FIELD_MANAGER, force: true }),
  ServerSideApply: (client, type, m, s) =>
    client.apply(type, m, {
      fieldManager: s?.serverSideApply?.fieldManager || DEFAULT_FIELD_MANAGER,
      force: s?.serverSideApply?.force ?? false,
    }),
  CreateOnly: async (client, type, m) =>
    (await client.find(type, m.metadata.name ?? "", m.metadata.namespace)) ?? client.create(type, m),
  ReadOnly: (client, type, m) => client.find(type, m.metadata.name ?? "", m.metadata.namespace),
};

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const [a, b] = apiVersion.split("/");
  return b === undefined ? { group: "", version: a ?? "" } : { group: a ?? "", version: b };
}

export interface ApplyInput {
  client: ManifestClient;
  mapper: KindMapper;
  allowed: KindAllowList;
  configs?: ManifestConfigOption[];
  /** false: only read (status sync between full applies). */
  write: boolean;
}

/**
 * Resolves manifest `ordinal` without touching it: allow-list, REST mapping, namespace, its
 * manifestConfig and strategy. A fault of the manifest becomes `failure`, never a throw.
 */
export async function resolveManifest(
  input: ApplyInput,
  manifest: Manifest,
  ordinal: number,
): Promise<ManifestOutcome> {
  const { group, version } = splitApiVersion(manifest.apiVersion);
  const name = manifest.metadata?.name ?? "";
  const namespace = manifest.metadata?.namespace ?? "";
  const meta: ManifestResourceMeta = {
    ordinal,
    group,
    version,
    kind: manifest.kind,
    resource: "",
    name,
    namespace,
  };
  const outcome: ManifestOutcome = { meta, strategy: "Update" };
  if (!input.allowed.allows(group, manifest.kind)) {
    const kind = group ? `${manifest.kind}.${group}` : manifest.kind;
    const message = `kind ${kind} is not in this agent's allow-list (${input.allowed.toString()})`;
    outcome.failure = { reason: "ManifestKindNotAllowed", message };
    return outcome;
  }
  try {
    await resolveType(input, manifest, outcome);
  } catch (err) {
    outcome.failure = { reason: "AppliedManifestFailed", message: errorMessage(err) };
  }
  return outcome;
}

/** Fills the outcome's REST type, namespace, manifestConfig and strategy; throws what the manifest lacks. */
async function resolveType(input: ApplyInput, manifest: Manifest, outcome: ManifestOutcome): Promise<void> {
  const { meta } = outcome;
  const type = await input.mapper.map(manifest.apiVersion, manifest.kind);
  meta.resource = type.plural;
  if (!type.namespaced) meta.namespace = "";
  else if (!meta.namespace)
    throw new Error(`${manifest.kind} ${meta.name} is namespaced and has no metadata.namespace`);
  outcome.type = type;
  outcome.config = configFor(input.configs, meta);
  outcome.strategy = outcome.config?.updateStrategy?.type ?? "Update";
}

/** Applies a resolved manifest by its strategy (or, with write=false, reads it); records faults in the outcome. */
export async function applyResolved(
  input: ApplyInput,
  outcome: ManifestOutcome,
  manifest: Manifest,
): Promise<void> {
  const type = outcome.type;
  if (!type || outcome.failure) return;
  const apply = input.write ? strategies[outcome.strategy] : strategies.ReadOnly;
  try {
    outcome.object = await apply(input.client, type, manifest as KubeObject, outcome.config?.updateStrategy);
  } catch (err) {
    const hint = isConflict(err)
      ? " (another field manager owns these fields; set serverSideApply.force to take them)"
      : "";
    outcome.failure = { reason: "AppliedManifestFailed", message: `${errorMessage(err)}${hint}` };
  }
}
