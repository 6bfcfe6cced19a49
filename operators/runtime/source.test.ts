import { describe, expect, it } from "vitest";
import type { EventHandlers } from "./informer.ts";
import type { KubeObject } from "./kube.ts";
import { enqueueMapped } from "./source.ts";
import type { Request } from "./controller.ts";

function fakeInformer() {
  const handlers: EventHandlers<KubeObject>[] = [];
  return {
    addEventHandler: (h: EventHandlers<KubeObject>) => void handlers.push(h),
    update: (before: KubeObject, after: KubeObject) => handlers.forEach((h) => h.onUpdate?.(before, after)),
    add: (obj: KubeObject) => handlers.forEach((h) => h.onAdd?.(obj)),
  };
}

const obj = (name: string, color: string): KubeObject => ({
  metadata: { name, namespace: "ns" },
  spec: { color },
});
const colorOf = (o: KubeObject) => (o["spec"] as { color: string }).color;

describe("enqueueMapped", () => {
  it("enqueues the mapping of the new and the old object on update, unless the predicate says nothing relevant changed", () => {
    const informer = fakeInformer();
    const queued: string[] = [];
    const target = { enqueue: (r: Request) => void queued.push(r.name) };
    enqueueMapped(
      informer,
      target,
      (o) => [{ cluster: "c", namespace: "ns", name: `owner-of-${o.metadata.name ?? ""}` }],
      (before, after) => colorOf(before) !== colorOf(after),
    );
    informer.add(obj("a", "red"));
    expect(queued).toEqual(["owner-of-a"]);
    informer.update(obj("a", "red"), obj("a", "red"));
    expect(queued).toEqual(["owner-of-a"]);
    informer.update(obj("a", "red"), obj("a", "blue"));
    expect(queued).toEqual(["owner-of-a", "owner-of-a", "owner-of-a"]);
  });
});
