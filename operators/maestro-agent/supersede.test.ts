import { describe, expect, it } from "vitest";
import { MANIFEST_WORK_NAME_ANNOTATION } from "../cloudevents/codec/manifestbundle.ts";
import type { ReceivedWork } from "../cloudevents/codec/manifestbundle.ts";
import {
  AGENT_ID,
  CONSUMER,
  HUB,
  UID,
  configMap,
  configMapType,
  received,
  setup,
} from "../../test/support/maestro-agent.ts";
import { AppliedManifestWorkResource, type AppliedManifestWork } from "./appliedwork.ts";

/** The same ManifestWork (mgmt-1/hc) sent again under a new resource ID, as a restored region does. */
function newerCopy(manifests = [configMap("cm-1")]): ReceivedWork {
  return {
    ...received({ manifests }),
    uid: "uid-2",
    name: "uid-2",
    metadata: {
      name: "uid-2",
      namespace: CONSUMER,
      creationTimestamp: "2030-02-01T00:00:00Z",
      annotations: { [MANIFEST_WORK_NAME_ANNOTATION]: "hc" },
    },
  };
}

/** The older copy, uid-1, of the same ManifestWork. */
const olderMetadata = {
  name: UID,
  namespace: CONSUMER,
  creationTimestamp: "2030-01-01T00:00:00Z",
  annotations: { [MANIFEST_WORK_NAME_ANNOTATION]: "hc" },
};

describe("a newer work of the same ManifestWork name supersedes the older", () => {
  it("retires the older once the newer is applied: shared objects kept (same uid), its own deleted, no status sent", async () => {
    const t = setup({ manifests: [configMap("cm-1"), configMap("cm-old-only")] });
    t.store.get(UID)!.metadata = olderMetadata;
    await t.reconcile();
    const uidBefore = t.kube.peek(configMapType, "cm-1", "ns")?.metadata.uid;
    const statusesBefore = t.publisher.published.length;

    t.store.upsert(newerCopy());
    await t.reconcileWork("uid-2");
    expect(t.queued).toEqual([UID]);
    expect(t.store.get(UID)).toMatchObject({ retired: true });
    const record = t.kube.peek<AppliedManifestWork>(AppliedManifestWorkResource, `${HUB}-uid-2`);
    expect(record?.metadata.annotations?.["hcp.aro.dev/manifestwork"]).toBe(`${CONSUMER}/hc`);

    // Deleting what only the older applied, then (once it is gone) its record.
    await t.reconcileWork(UID);
    expect(t.kube.peek(configMapType, "cm-old-only", "ns")).toBeUndefined();
    await t.reconcileWork(UID);
    expect(t.kube.peek(configMapType, "cm-1", "ns")?.metadata.uid).toBe(uidBefore);
    expect(t.record()).toBeUndefined();
    expect(t.store.get(UID)).toBeUndefined();
    // One status for the newer work; none for the retired one.
    expect(t.publisher.published.length).toBe(statusesBefore + 1);
    expect(t.resyncs.count).toBe(1);
  });

  it("never lets the older copy retire the newer", async () => {
    const t = setup();
    t.store.get(UID)!.metadata = olderMetadata;
    t.store.upsert(newerCopy());
    await t.reconcileWork("uid-2");
    expect(t.queued).toEqual([UID]);
    t.queued.length = 0;
    await t.reconcileWork(UID);
    expect(t.queued).toEqual([]);
    expect(t.store.get("uid-2")?.deletionTimestamp).toBeUndefined();
  });

  it("after a restart, retires a copy known only from its record on the cluster", async () => {
    const t = setup();
    t.store.remove(UID); // the store of a restarted agent holds only what the source sent again
    const cm = t.kube.seed(configMapType, { metadata: { name: "cm-1", namespace: "ns" }, data: {} });
    t.kube.seed(AppliedManifestWorkResource, {
      metadata: { name: `${HUB}-uid-0`, annotations: { "hcp.aro.dev/manifestwork": `${CONSUMER}/hc` } },
      spec: { hubHash: HUB, agentID: AGENT_ID, manifestWorkName: "uid-0" },
      status: {
        appliedResources: [
          {
            group: "",
            version: "v1",
            resource: "configmaps",
            namespace: "ns",
            name: "cm-1",
            uid: cm.metadata.uid,
          },
        ],
      },
    });
    t.store.upsert(newerCopy());
    await t.reconcileWork("uid-2");
    expect(t.queued).toEqual(["uid-0"]);
    expect(t.store.get("uid-0")).toMatchObject({ retired: true, generation: 0 });
    await t.reconcileWork("uid-0");
    expect(t.kube.peek(AppliedManifestWorkResource, `${HUB}-uid-0`)).toBeUndefined();
    expect(t.kube.peek(configMapType, "cm-1", "ns")?.metadata.uid).toBe(cm.metadata.uid);
    expect(t.store.get("uid-0")).toBeUndefined();
    // The newer work's status alone.
    expect(t.publisher.published).toHaveLength(1);
  });
});
