import { readFileSync } from "node:fs";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { CATALOG_KEY, compareVersions, poolTooFarBehind, ReleaseCatalog, skippedMinor } from "./catalog.ts";

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

  it("reads each release's end of life, an RFC 3339 date-time, and names one that is not", () => {
    const eol = ReleaseCatalog.parse(`
releases:
  - version: 4.19.7
    image: a
    endOfLifeTimestamp: 2027-02-17T00:00:00Z
  - version: 4.20.2
    image: b
    endOfLifeTimestamp: "2027-06-30T12:00:00+02:00"
  - version: 4.18.22
    image: c
  - version: 4.17.1
    image: d
    endOfLifeTimestamp: next spring
`);
    expect(eol.releases.map((r) => [r.version, r.endOfLifeTimestamp])).toEqual([
      ["4.20.2", "2027-06-30T12:00:00+02:00"],
      ["4.19.7", "2027-02-17T00:00:00Z"],
      ["4.18.22", undefined],
      ["4.17.1", undefined],
    ]);
    expect(eol.problems).toEqual([
      "releases[3].endOfLifeTimestamp of 4.17.1 is not an RFC 3339 date-time such as 2027-02-17T00:00:00Z; the release is offered without one",
    ]);
  });

  it("gives every release the region ships its minor's end of life (Red Hat's life cycle)", () => {
    const file = new URL("../../config/bases/operators/release-catalog.yaml", import.meta.url);
    const configMap = load(readFileSync(file, "utf8")) as { data: Record<string, string> };
    const shipped = ReleaseCatalog.parse(configMap.data[CATALOG_KEY] ?? "");
    expect(shipped.problems).toEqual([]);
    const minor = (v: string): string => v.split(".").slice(0, 2).join(".");
    const byMinor = Object.fromEntries(
      shipped.releases.map((r) => [minor(r.version), r.endOfLifeTimestamp ?? "none"]),
    );
    expect(byMinor).toEqual({
      "4.18": "2026-08-25T00:00:00Z",
      "4.19": "2026-12-17T00:00:00Z",
      "4.20": "2027-04-21T00:00:00Z",
    });
    expect(shipped.releases.every((r) => r.endOfLifeTimestamp === byMinor[minor(r.version)])).toBe(true);
  });

  it("compares versions numerically", () => {
    expect(compareVersions("4.19.10", "4.19.9")).toBeGreaterThan(0);
    expect(compareVersions("4.19", "4.19.7")).toBe(0);
    expect(compareVersions("4.18.30", "4.19.0")).toBeLessThan(0);
  });
});

describe("the update graph", () => {
  it("moves a control plane to a newer z-stream or the next minor, never past one", () => {
    expect(skippedMinor("4.18.22", "4.18.30")).toBeUndefined();
    expect(skippedMinor("4.18.22", "4.19.7")).toBeUndefined();
    expect(skippedMinor("4.18", "4.19")).toBeUndefined();
    expect(skippedMinor("4.19.7", "4.18.22")).toBeUndefined(); // a downgrade: refused by its own rule
    expect(skippedMinor("4.18.22", "4.20.2")).toBe(
      "a cluster on 4.18 moves one minor version at a time: to 4.19 first, then on to 4.20",
    );
    expect(skippedMinor("4.18", "5.0")).toContain("to 4.19 first");
    expect(skippedMinor("4.18", "not a version")).toBeUndefined();
  });

  it("lets node pools run at most two minors behind their control plane", () => {
    expect(poolTooFarBehind("4.18.22", "4.20.2")).toBeUndefined();
    expect(poolTooFarBehind("4.20.2", "4.20.2")).toBeUndefined();
    expect(poolTooFarBehind("4.21", "4.20")).toBeUndefined(); // ahead: the pool's own rule
    expect(poolTooFarBehind("4.17.3", "4.20.2")).toBe(
      "nodes on 4.17 may run at most 2 minor versions behind their control plane on 4.20",
    );
    expect(poolTooFarBehind("4.20", "5.0")).toContain("at most 2 minor versions behind");
  });
});
