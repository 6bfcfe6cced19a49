/**
 * Cancellation of KubeClient and Applier calls against a real kube-apiserver: a watch in flight
 * ends with the signal's reason, and writes whose signal has aborted never reach the server.
 * (Aborting each kind of request mid-flight is tested against a holding server in
 * operators/runtime/kube.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Applier } from "../../operators/runtime/apply.ts";
import { KubeApiError, type KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, configMap, configMapType, tempNamespace } from "../support/fixtures.ts";
import { rejection } from "../support/rejection.ts";

const client = clientFor("service");
let ns: { name: string; remove(): Promise<void> };

beforeAll(async () => {
  ns = await tempNamespace(client, "cancel");
});
afterAll(async () => {
  await ns.remove();
});

describe("KubeClient cancellation", () => {
  it("a watch in flight ends with the signal's reason, after the events it got", async () => {
    await client.create(configMapType, configMap(ns.name, "watched"));
    const abort = new AbortController();
    const events = client.watch(configMapType, { namespace: ns.name, signal: abort.signal });
    const first = await events.next();
    expect(first.value).toMatchObject({ type: "ADDED", object: { metadata: { name: "watched" } } });
    const reason = new Error("reconcile cancelled");
    abort.abort(reason);
    expect(await rejection(events.next())).toBe(reason);
  });

  it("a request whose signal aborted is not sent, and fails with the reason, not a KubeApiError", async () => {
    const reason = new Error("too late");
    const aborted = AbortSignal.abort(reason);
    expect(
      await rejection(client.create(configMapType, configMap(ns.name, "never"), { signal: aborted })),
    ).toBe(reason);
    expect(await client.find(configMapType, "never", ns.name)).toBeUndefined();
    const err = await rejection(client.get(configMapType, "never", ns.name, { signal: AbortSignal.abort() }));
    expect(err).not.toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ name: "AbortError" });
  });

  it("the Applier's writes honour the signal", async () => {
    const applier = new Applier(client, "cancel-test");
    const written = await applier.apply<KubeObject>(configMapType, configMap(ns.name, "applied", { a: "1" }));
    const aborted = AbortSignal.abort(new Error("cancelled"));
    await rejection(applier.addFinalizer(configMapType, written, "test.hcp.aro.dev/f", { signal: aborted }));
    await rejection(
      applier.apply(configMapType, configMap(ns.name, "applied", { a: "2" }), { signal: aborted }),
    );
    const stored = await client.get<KubeObject>(configMapType, "applied", ns.name);
    expect(stored.metadata.finalizers).toBeUndefined();
    expect(stored["data"]).toEqual({ a: "1" });
  });
});
