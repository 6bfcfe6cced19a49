/**
 * The agent's durable record of what it applied: one cluster-scoped AppliedManifestWork per work
 * (OCM's CRD), named `<hubHash>-<workName>`, listing every applied object with its uid. It is
 * what lets the agent delete a manifest dropped from a work, clean up a deleted work per its
 * deleteOption, and find works it applied before a restart. Its create carries the first apply's
 * intent (create()), so at create a work costs one create and one status write, as with OCM's agent.
 */
import { createHash } from "node:crypto";
import { WORK_GROUP, type DeleteOption, type ResourceIdentifier } from "../api/work/v1.ts";
import { isDeepStrictEqual } from "node:util";
import type { Applier } from "../runtime/apply.ts";
import type { KubeClient, KubeObject, ResourceType } from "../runtime/kube.ts";
import { manifestWorkName, type AgentWork } from "../cloudevents/store/works.ts";
import type { ManifestOutcome } from "./apply.ts";

export const AppliedManifestWorkResource = {
  group: WORK_GROUP,
  version: "v1",
  kind: "AppliedManifestWork",
  plural: "appliedmanifestworks",
  namespaced: false,
} as const satisfies ResourceType;

const DELETE_OPTION_ANNOTATION = "hcp.aro.dev/delete-option";
/**
 * `<namespace>/<name>` of the ManifestWork the record's work was sent from (store/works.ts
 * manifestWorkName): after a restart it is what says which newer work supersedes a recorded one.
 */
const MANIFEST_WORK_ANNOTATION = "hcp.aro.dev/manifestwork";
/**
 * The objects the first apply of a work is about to create, carried by the record's create (JSON
 * list of AppliedResource without uids): a create cannot write the status (the subresource
 * ignores it) and OCM's spec schema prunes unknown fields. It stands for the record's status
 * until the first status write, after which the status alone says what was applied.
 */
const INTENT_ANNOTATION = "hcp.aro.dev/applied-intent";

/** The work a record is written for. */
export interface RecordOwner {
  /** The agent's name of the work: its resource ID. */
  name: string;
  /** `<namespace>/<name>` of the source's ManifestWork, when the source said. */
  manifestWorkName?: string;
  deleteOption?: DeleteOption;
}

/** The record's owner for a work the agent holds. */
export function recordOwner(work: AgentWork): RecordOwner {
  const manifestWork = manifestWorkName(work);
  return {
    name: work.name,
    ...(manifestWork ? { manifestWorkName: manifestWork } : {}),
    ...(work.spec.deleteOption ? { deleteOption: work.spec.deleteOption } : {}),
  };
}

export interface AppliedResource {
  group: string;
  version: string;
  resource: string;
  namespace: string;
  name: string;
  uid?: string;
}

/** What the record lists for a manifest's object (a ReadOnly one is never the work's to delete). */
export function appliedResourceOf(o: ManifestOutcome): AppliedResource | undefined {
  if (!o.type || o.strategy === "ReadOnly") return undefined;
  const { group = "", version = "", resource = "", namespace = "", name = "" } = o.meta;
  return {
    group,
    version,
    resource,
    namespace,
    name,
    ...(o.object?.metadata.uid ? { uid: o.object.metadata.uid } : {}),
  };
}

export interface AppliedManifestWork extends KubeObject {
  spec?: { hubHash: string; agentID?: string; manifestWorkName: string };
  status?: { appliedResources?: AppliedResource[] };
}

/** OCM's hub hash: SHA-256 of the hub's address, here the broker's host:port. */
export function hubHash(brokerHost: string): string {
  return createHash("sha256").update(brokerHost).digest("hex");
}

/**
 * What the record says the agent applied (or may have, if it stopped before saying more): its
 * status once written; before that, the intent its create carried.
 */
export function recordedResources(record: AppliedManifestWork | undefined): AppliedResource[] {
  if (!record) return [];
  if (record.status !== undefined) return record.status.appliedResources ?? [];
  const intent = record.metadata.annotations?.[INTENT_ANNOTATION];
  return intent ? (JSON.parse(intent) as AppliedResource[]) : [];
}

export const sameResource = (a: AppliedResource, b: AppliedResource): boolean =>
  a.group === b.group && a.resource === b.resource && a.namespace === b.namespace && a.name === b.name;

function typeOf(r: AppliedResource): ResourceType {
  return { group: r.group, version: r.version, kind: "", plural: r.resource, namespaced: r.namespace !== "" };
}

/** Whether the deleteOption leaves this resource on the cluster. */
export function isOrphaned(option: DeleteOption | undefined, r: AppliedResource): boolean {
  if (option?.propagationPolicy === "Orphan") return true;
  if (option?.propagationPolicy !== "SelectivelyOrphan") return false;
  return (option.selectivelyOrphans?.orphaningRules ?? []).some(
    (rule: ResourceIdentifier) =>
      (rule.group ?? "") === r.group &&
      rule.resource === r.resource &&
      rule.name === r.name &&
      (rule.namespace ?? "") === r.namespace,
  );
}

/**
 * Where a deletion reads whether an applied object is still there (default: the apiserver); the
 * agent answers from a watch what a watch can answer (objects.ts).
 */
export type LiveReader = (r: AppliedResource, type: ResourceType) => Promise<KubeObject | undefined>;

/** The reads and deletes AppliedWorks makes on the management cluster. */
export type AppliedWorksClient = Pick<KubeClient, "find" | "delete" | "listAll">;
/** The agent's writes of the record: server-side applies under its field manager. */
export type RecordWriter = Pick<Applier, "apply" | "applyStatus">;

export interface AppliedWorksOptions {
  kube: AppliedWorksClient;
  applier: RecordWriter;
  /** See hubHash(). */
  hubHash: string;
  agentId: string;
}

const resourceKey = (r: AppliedResource): string => `${r.group}/${r.resource}/${r.namespace}/${r.name}`;

export class AppliedWorks {
  readonly #client: AppliedWorksClient;
  readonly #applier: RecordWriter;
  readonly #hubHash: string;
  readonly #agentId: string;
  /**
   * Which works' records hold each object, and each work's objects: derived from the records this
   * process wrote, seeded once from the records on the cluster (sharedWithOthers), so that an
   * object two works apply is kept when one of them goes, as OCM's agent keeps a shared resource.
   */
  readonly #holders = new Map<string, Set<string>>();
  readonly #held = new Map<string, string[]>();
  /** The records of each source ManifestWork name, by work name (several while one supersedes another). */
  readonly #byManifestWork = new Map<string, Set<string>>();
  #seeded: Promise<void> | undefined;

  constructor(opts: AppliedWorksOptions) {
    this.#client = opts.kube;
    this.#applier = opts.applier;
    this.#hubHash = opts.hubHash;
    this.#agentId = opts.agentId;
  }

  nameOf(workName: string): string {
    return `${this.#hubHash}-${workName}`;
  }

  get(workName: string): Promise<AppliedManifestWork | undefined> {
    return this.#client.find<AppliedManifestWork>(AppliedManifestWorkResource, this.nameOf(workName));
  }

  /**
   * Creates the record of a work's first apply, listing `intent` (the objects it is about to
   * create) in an annotation: one write where an intent status would be a second, as OCM's agent
   * makes one create and one status write per work. Crash-safe: the record covers every object
   * before any is created, and until the status write after the apply (record()) the intent is
   * what recordedResources() answers, so a restarted agent deletes or re-records them all.
   */
  async create(owner: RecordOwner, intent: AppliedResource[]): Promise<AppliedManifestWork> {
    const annotations = { ...this.#annotations(owner), [INTENT_ANNOTATION]: JSON.stringify(intent) };
    const created = await this.#applier.apply<AppliedManifestWork>(AppliedManifestWorkResource, {
      metadata: { name: this.nameOf(owner.name), annotations },
      spec: this.#spec(owner.name),
    });
    this.#indexOwner(owner, intent);
    return created;
  }

  #annotations({ manifestWorkName, deleteOption }: RecordOwner): Record<string, string> {
    return {
      [DELETE_OPTION_ANNOTATION]: JSON.stringify(deleteOption ?? {}),
      ...(manifestWorkName ? { [MANIFEST_WORK_ANNOTATION]: manifestWorkName } : {}),
    };
  }

  #spec(workName: string): NonNullable<AppliedManifestWork["spec"]> {
    return { hubHash: this.#hubHash, agentID: this.#agentId, manifestWorkName: workName };
  }

  #indexOwner({ name, manifestWorkName }: RecordOwner, resources: AppliedResource[]): void {
    this.#index(name, resources);
    if (manifestWorkName) this.#indexManifestWork(name, manifestWorkName);
  }

  /**
   * Writes the record (creating it if needed) so that it lists exactly `resources`, and resolves
   * it as written. The work's deleteOption is kept beside it: after a restart a deletion may
   * arrive without the spec. Given the record as it stands, only what differs is written: the
   * drift-repair apply of an unchanged work writes nothing, and the result of an apply, which
   * only adds uids to the intent recorded before it, writes the status alone.
   */
  async record(
    owner: RecordOwner,
    resources: AppliedResource[],
    existing?: AppliedManifestWork,
  ): Promise<AppliedManifestWork> {
    const annotations = this.#annotations(owner);
    const spec = this.#spec(owner.name);
    const status = { appliedResources: resources };
    const kept = existing?.metadata.annotations ?? {};
    const specKept =
      Object.entries(annotations).every(([k, v]) => kept[k] === v) && isDeepStrictEqual(existing?.spec, spec);
    // Until the status is written the intent is the record's list: a spec write keeps it.
    const intent = existing?.status === undefined ? kept[INTENT_ANNOTATION] : undefined;
    const current =
      existing && specKept
        ? existing
        : await this.#applier.apply<AppliedManifestWork>(AppliedManifestWorkResource, {
            metadata: {
              name: this.nameOf(owner.name),
              annotations: { ...annotations, ...(intent ? { [INTENT_ANNOTATION]: intent } : {}) },
            },
            spec,
          });
    this.#indexOwner(owner, resources);
    if (isDeepStrictEqual(current.status, status)) return current;
    return (
      (await this.#applier.applyStatus<AppliedManifestWork>(AppliedManifestWorkResource, current, status)) ??
      current
    );
  }

  recordedDeleteOption(record: AppliedManifestWork | undefined): DeleteOption | undefined {
    const text = record?.metadata.annotations?.[DELETE_OPTION_ANNOTATION];
    return text ? (JSON.parse(text) as DeleteOption) : undefined;
  }

  async remove(workName: string): Promise<void> {
    await this.#client.delete(AppliedManifestWorkResource, { name: this.nameOf(workName) });
    this.#index(workName, []);
    for (const [key, names] of this.#byManifestWork) {
      names.delete(workName);
      if (names.size === 0) this.#byManifestWork.delete(key);
    }
  }

  /**
   * The works recorded on the cluster for the source's ManifestWork `<namespace>/<name>`, other
   * than `workName`: an older copy a restart left only as its record.
   */
  async othersRecordedFor(manifestWorkName: string, workName: string): Promise<string[]> {
    this.#seeded ??= this.#seed();
    await this.#seeded;
    return [...(this.#byManifestWork.get(manifestWorkName) ?? [])].filter((n) => n !== workName);
  }

  #indexManifestWork(workName: string, manifestWorkName: string): void {
    const names = this.#byManifestWork.get(manifestWorkName) ?? new Set<string>();
    names.add(workName);
    this.#byManifestWork.set(manifestWorkName, names);
  }

  /**
   * Of `resources`, those another work of this agent also holds and is not deleting: they stay
   * when `workName` goes or drops them (an object applied by the works of two hub objects, such as
   * the same work written again under a new resource ID after a restore, must outlive the older
   * one). Works being deleted do not hold an object, or two that share one and go together would
   * each leave it to the other.
   */
  async sharedWithOthers(
    workName: string,
    resources: AppliedResource[],
    deleting: (workName: string) => boolean,
  ): Promise<AppliedResource[]> {
    this.#seeded ??= this.#seed();
    await this.#seeded;
    return resources.filter((r) =>
      [...(this.#holders.get(resourceKey(r)) ?? [])].some((h) => h !== workName && !deleting(h)),
    );
  }

  /** Indexes the records on the cluster that this process has not written (yet). */
  async #seed(): Promise<void> {
    const list = await this.#client.listAll<AppliedManifestWork>(AppliedManifestWorkResource);
    for (const a of list.items) {
      const name = a.spec?.manifestWorkName;
      if (a.spec?.hubHash !== this.#hubHash || a.spec.agentID !== this.#agentId || !name) continue;
      if (!this.#held.has(name)) this.#index(name, recordedResources(a));
      const manifestWork = a.metadata.annotations?.[MANIFEST_WORK_ANNOTATION];
      if (manifestWork) this.#indexManifestWork(name, manifestWork);
    }
  }

  #index(workName: string, resources: AppliedResource[]): void {
    for (const key of this.#held.get(workName) ?? []) {
      const holders = this.#holders.get(key);
      holders?.delete(workName);
      if (holders?.size === 0) this.#holders.delete(key);
    }
    const keys = resources.map(resourceKey);
    if (keys.length === 0) {
      this.#held.delete(workName);
      return;
    }
    this.#held.set(workName, keys);
    for (const key of keys) {
      const holders = this.#holders.get(key) ?? new Set<string>();
      holders.add(workName);
      this.#holders.set(key, holders);
    }
  }

  /** Names of the works this agent recorded for this hub. */
  async recordedWorkNames(): Promise<string[]> {
    const list = await this.#client.listAll<AppliedManifestWork>(AppliedManifestWorkResource);
    return list.items
      .filter((a) => a.spec?.hubHash === this.#hubHash && a.spec.agentID === this.#agentId)
      .map((a) => a.spec?.manifestWorkName ?? "")
      .filter(Boolean);
  }

  /**
   * Deletes the resources (background propagation) and resolves with those still present: an
   * object counts as gone once it is not found or has another uid (someone re-created it).
   */
  async deleteResources(resources: AppliedResource[], read?: LiveReader): Promise<AppliedResource[]> {
    const remaining: AppliedResource[] = [];
    for (const r of resources) {
      const type = typeOf(r);
      const live = read
        ? await read(r, type)
        : await this.#client.find(type, r.name, r.namespace || undefined);
      if (!live) continue;
      if (r.uid && live.metadata.uid !== r.uid) continue;
      if (!live.metadata.deletionTimestamp) {
        await this.#client.delete(
          type,
          { name: r.name, namespace: r.namespace || undefined },
          { propagationPolicy: "Background" },
        );
      }
      remaining.push(r);
    }
    return remaining;
  }
}
