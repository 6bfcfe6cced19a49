import { describe, expect, test } from "vitest";
import type { FeedbackRule } from "../api/work/v1.ts";
import type { ManifestOutcome } from "./apply.ts";
import { collectFeedback, jsonPathProblem } from "./feedback.ts";
import { manifestCondition } from "./status.ts";

describe("jsonPathProblem", () => {
  test.each([
    ".status.readyReplicas",
    "$.status.replicas",
    "status.replicas",
    '.status.conditions[?(@.type=="Ready")].status',
    ".status.conditions[*].type",
    ".status.conditions[-1:].type",
    ".spec.containers[0].image",
    ".status['replicas']",
    "..replicas",
  ])("accepts %s", (path) => {
    expect(jsonPathProblem(path)).toBeUndefined();
  });

  test.each([
    { path: ".status[", problem: 'unclosed "[" at character 7' },
    { path: ".status.", problem: "expected a field name at character 8" },
    { path: "{.status.replicas}", problem: 'unexpected "{" at character 0' },
    { path: ".status replicas", problem: 'unexpected " " at character 7' },
    {
      path: '.status.conditions[?(@.type=="Ready"].status',
      problem: 'unclosed filter "[?(" at character 18',
    },
    { path: ".status.conditions[x y]", problem: 'bad subscript "[x y]" at character 18' },
    { path: "", problem: "the path is empty" },
  ])("refuses $path: $problem", ({ path, problem }) => {
    expect(jsonPathProblem(path)).toBe(problem);
  });
});

const rules: FeedbackRule[] = [
  {
    type: "JSONPaths",
    jsonPaths: [
      { name: "replicas", path: ".status.replicas" },
      { name: "broken", path: ".status[" },
    ],
  },
];

test("a bad path is an error of its rule; the good ones are still read", () => {
  const deployment = { apiVersion: "apps/v1", kind: "Deployment", status: { replicas: 2 } };
  expect(collectFeedback(deployment, rules)).toEqual({
    values: [{ name: "replicas", fieldValue: { type: "Integer", integer: 2 } }],
    errors: ['broken: invalid JSONPath ".status[": unclosed "[" at character 7'],
  });
});

describe("a bad feedback path is reported on the manifest as StatusFeedbackSynced=False", () => {
  const outcome = (object: boolean): ManifestOutcome => ({
    meta: {
      ordinal: 0,
      group: "apps",
      version: "v1",
      kind: "Deployment",
      resource: "deployments",
      name: "d",
    },
    strategy: "Update",
    config: {
      resourceIdentifier: { group: "apps", resource: "deployments", name: "d" },
      feedbackRules: rules,
    },
    ...(object
      ? {
          object: {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: "d" },
            status: { replicas: 2 },
          },
        }
      : {}),
  });
  test.each([
    { name: "with the object applied", object: true },
    { name: "before the object exists", object: false },
  ])("$name", ({ object }) => {
    const entry = manifestCondition(outcome(object), undefined, 1);
    expect(entry.conditions.find((c) => c.type === "StatusFeedbackSynced")).toMatchObject({
      status: "False",
      reason: "StatusFeedbackSyncFailed",
      message: expect.stringMatching(/broken: invalid JSONPath "\.status\["/) as unknown,
    });
  });
});
