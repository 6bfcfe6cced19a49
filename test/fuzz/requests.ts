/**
 * ARM requests for the frontend's fuzz targets: paths made from the route table with valid
 * parameters and then changed segment by segment, and bodies that are valid ones mutated or any
 * JSON at all. Shared by the unit targets (pure parsing) and the HTTP test against a running
 * frontend (test/integration/frontend-fuzz.test.ts).
 */
import fc from "fast-check";
import type { ResourceKind } from "../../operators/frontend/resource-id.ts";
import { PATTERNS } from "../../operators/frontend/http/routes.ts";
import { clusterBody, nodePoolBody } from "../support/frontend.ts";
import { hostileJson, hostileString, mutated, type Json } from "./arbitraries.ts";

/** Path parameters that name real things of `subscriptionId`. */
export function validParams(subscriptionId: string): Record<string, string> {
  return {
    subscriptionId,
    resourceGroup: "rg-fuzz",
    cluster: "c1",
    nodePool: "np1",
    location: "eastus",
    operationId: "1b4e28ba-2fa1-41d2-883f-0016d3cca427",
    version: "4.19",
    deployment: "d1",
  };
}

/** One change to a path's segments. */
interface SegmentChange {
  op: "replace" | "case" | "drop" | "insert";
  at: number;
  value: string;
  /** Percent-encode the replacement. */
  encode: boolean;
}

const segmentChange: fc.Arbitrary<SegmentChange> = fc.record({
  op: fc.constantFrom(
    "replace" as const,
    "replace" as const,
    "case" as const,
    "drop" as const,
    "insert" as const,
  ),
  at: fc.nat(),
  value: fc.oneof(hostileString, fc.constantFrom("", "x", "..", "%", "%2e", "%00")),
  encode: fc.boolean(),
});

function changeSegments(segments: string[], c: SegmentChange): string[] {
  const out = [...segments];
  const i = out.length === 0 ? 0 : c.at % out.length;
  if (c.op === "replace") out[i] = c.encode ? encodeURIComponent(c.value.toWellFormed()) : c.value;
  else if (c.op === "case") out[i] = (out[i] ?? "").toUpperCase();
  else if (c.op === "drop") out.splice(i, 1);
  else out.splice(i, 0, c.value);
  return out;
}

/** A path of the route table with `subscriptionId`'s parameters, changed in up to three segments. */
export function armPath(subscriptionId: string): fc.Arbitrary<string> {
  const params = validParams(subscriptionId);
  return fc
    .tuple(fc.constantFrom(...Object.values(PATTERNS)), fc.array(segmentChange, { maxLength: 3 }))
    .map(([pattern, changes]) => {
      const filled = pattern.split("/").map((s) => (s.startsWith("{") ? (params[s.slice(1, -1)] ?? "x") : s));
      return changes.reduce(changeSegments, filled).join("/");
    });
}

export function validBody(kind: ResourceKind, subscriptionId: string): Json {
  return (kind === "cluster" ? clusterBody(subscriptionId) : nodePoolBody()) as Json;
}

/** A body for `kind`: mostly a valid one mutated, sometimes any JSON. */
export function armBody(kind: ResourceKind, subscriptionId: string): fc.Arbitrary<Json> {
  return fc.oneof(
    { weight: 4, arbitrary: mutated(fc.constant(validBody(kind, subscriptionId)), 5) },
    { weight: 1, arbitrary: hostileJson() },
  );
}
