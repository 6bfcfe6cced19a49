import { describe, expect, it } from "vitest";
import type { ExternalAuth } from "../api/v1alpha1/index.ts";
import { EXTERNAL_AUTHS_ANNOTATION } from "../api/v1alpha1/labels.ts";
import { carriedAnnotation, carriedBy, externalAuthsCarried } from "./external-auths.ts";

const ea = (name: string, created: string, generation = 1, deleting = false): ExternalAuth => ({
  metadata: {
    name,
    generation,
    creationTimestamp: created,
    ...(deleting ? { deletionTimestamp: "2026-01-02T00:00:00Z" } : {}),
  },
  spec: {
    clusterRef: { name: "c" },
    issuer: { url: "https://i", audiences: ["a"] },
    claim: { mappings: { username: { claim: "email" } } },
  },
});

describe("externalAuthsCarried", () => {
  it("carries the oldest that is not deleting, and only one", () => {
    const all = [
      ea("b", "2026-01-01T00:00:02Z"),
      ea("a", "2026-01-01T00:00:01Z", 1, true),
      ea("c", "2026-01-01T00:00:03Z"),
    ];
    expect(externalAuthsCarried(all).map((x) => x.metadata.name)).toEqual(["b"]);
    expect(externalAuthsCarried([])).toEqual([]);
  });
});

describe("the work's annotation", () => {
  it("round-trips name and generation", () => {
    const annotations = carriedAnnotation([ea("entra", "t", 3)]);
    expect(annotations).toEqual({ [EXTERNAL_AUTHS_ANNOTATION]: "entra=3" });
    expect(carriedBy({ metadata: { annotations } })).toEqual(new Map([["entra", 3]]));
    expect(carriedAnnotation([])).toEqual({});
  });

  it.each(["", "=", "entra", "entra=x", "entra=1.5", ",=2"])("reads %j as carrying nothing", (value) => {
    expect(carriedBy({ metadata: { annotations: { [EXTERNAL_AUTHS_ANNOTATION]: value } } }).size).toBe(0);
  });
});
