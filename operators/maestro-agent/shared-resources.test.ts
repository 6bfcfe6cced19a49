import { describe, expect, it } from "vitest";
import type { KubeObject } from "../runtime/kube.ts";
import { AppliedWorks, type AppliedManifestWork, type AppliedResource } from "./appliedwork.ts";

const cm = (name: string): AppliedResource => ({
  group: "",
  version: "v1",
  resource: "configmaps",
  namespace: "ns",
  name,
});

/** AppliedWorks over records held in memory, `onCluster` as a restarted agent finds them. */
function appliedWorks(onCluster: AppliedManifestWork[] = []) {
  const records = new Map<string, AppliedManifestWork>(onCluster.map((a) => [a.metadata.name ?? "", a]));
  const kube = {
    find: () => Promise.resolve(undefined),
    delete: (_t: unknown, ref: { name: string }) => Promise.resolve(records.delete(ref.name)),
    listAll: <T extends KubeObject>() =>
      Promise.resolve({ items: [...records.values()] as unknown as T[], metadata: {} }),
  };
  const applier = {
    apply: <T extends KubeObject>(_t: unknown, obj: KubeObject) => Promise.resolve(obj as T),
    applyStatus: <T extends KubeObject>(_t: unknown, obj: KubeObject, status: unknown) =>
      Promise.resolve({ ...obj, status } as unknown as T),
  };
  return new AppliedWorks({ kube, applier, hubHash: "h", agentId: "a" });
}

const record = (work: string, resources: AppliedResource[]): AppliedManifestWork => ({
  metadata: { name: `h-${work}` },
  spec: { hubHash: "h", agentID: "a", manifestWorkName: work },
  status: { appliedResources: resources },
});

describe("AppliedWorks.sharedWithOthers", () => {
  const live = (): boolean => false;

  it("names the objects another live work holds, from records written here and found on the cluster", async () => {
    const works = appliedWorks([record("old", [cm("a"), cm("b")])]);
    await works.record({ name: "new" }, [cm("a"), cm("c")]);
    expect(await works.sharedWithOthers("old", [cm("a"), cm("b")], live)).toEqual([cm("a")]);
    expect(await works.sharedWithOthers("new", [cm("a"), cm("c")], live)).toEqual([cm("a")]);
    await works.remove("new");
    expect(await works.sharedWithOthers("old", [cm("a"), cm("b")], live)).toEqual([]);
  });

  it("does not count a work that is being deleted, so two that go together do not leave the object", async () => {
    const works = appliedWorks();
    await works.record({ name: "one" }, [cm("a")]);
    await works.record({ name: "two" }, [cm("a")]);
    expect(await works.sharedWithOthers("one", [cm("a")], (w) => w === "two")).toEqual([]);
  });

  it("follows a work's record as it changes", async () => {
    const works = appliedWorks();
    await works.record({ name: "one" }, [cm("a")]);
    await works.record({ name: "two" }, [cm("a")]);
    await works.record({ name: "two" }, [cm("b")]);
    expect(await works.sharedWithOthers("one", [cm("a")], live)).toEqual([]);
  });
});
