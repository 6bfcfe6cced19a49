import { describe, expect, it } from "vitest";
import { compareVersions, ReleaseCatalog } from "./catalog.ts";

const text = `
releases:
  - version: 4.19.7
    channelGroups: [stable, fast]
    image: quay.io/openshift-release-dev/ocp-release:4.19.7-multi
  - version: 4.19.10
    channelGroups: [fast]
    image: quay.io/openshift-release-dev/ocp-release:4.19.10-multi
  - version: 4.18.20
    image: quay.io/openshift-release-dev/ocp-release:4.18.20-multi
  - version: "4.20"
    image: x
`;

describe("ReleaseCatalog", () => {
  const catalog = ReleaseCatalog.parse(text);

  it("resolves major.minor to the newest patch of the channel group", () => {
    expect(catalog.resolve({ id: "4.19" })).toMatchObject({ ok: true, release: { version: "4.19.7" } });
    expect(catalog.resolve({ id: "4.19", channelGroup: "fast" })).toMatchObject({
      ok: true,
      release: { version: "4.19.10" },
    });
    expect(catalog.resolve({ id: "4.18.20" })).toMatchObject({ ok: true, release: { version: "4.18.20" } });
  });

  it("refuses what it does not offer and lists what it does", () => {
    const got = catalog.resolve({ id: "4.21" });
    expect(got).toMatchObject({ ok: false, reason: "UnknownVersion" });
    expect(!got.ok && got.message).toBe(
      "OpenShift 4.21 is not offered in channel group stable; offered: 4.18.20, 4.19.7",
    );
  });

  it("skips bad entries and names them", () => {
    expect(catalog.problems).toEqual(['releases[3].version "4.20" is not major.minor.patch']);
    expect(ReleaseCatalog.parse("releases: [").problems[0]).toContain("not YAML");
  });

  it("compares versions numerically", () => {
    expect(compareVersions("4.19.10", "4.19.9")).toBeGreaterThan(0);
    expect(compareVersions("4.19", "4.19.7")).toBe(0);
    expect(compareVersions("4.18.30", "4.19.0")).toBeLessThan(0);
  });
});
