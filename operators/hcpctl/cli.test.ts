/**
 * The command line's contract for bad input: one "error: …" line naming what is wrong, a non-zero
 * exit code, no stack trace; argument errors are found before any kubeconfig is read.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readySnapshot } from "../../test/support/hcpctl-objects.ts";
import { runHcpctl, textSink } from "../../test/support/hcpctl-run.ts";
import { run } from "./cli.ts";
import { writeGather } from "./gather.ts";
import { plain } from "./paint.ts";

const hcpctl = runHcpctl;

let dir: string;
let unreachable: string;
let noContext: string;

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function kubeconfig(server: string, current: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    `clusters: [{name: c, cluster: {server: "${server}"}}]`,
    "users: [{name: u, user: {token: t}}]",
    "contexts: [{name: ctx, context: {cluster: c, user: u, namespace: team}}]",
    `current-context: "${current}"`,
  ].join("\n");
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hcpctl-cli-"));
  unreachable = join(dir, "unreachable.kubeconfig");
  noContext = join(dir, "nocontext.kubeconfig");
  await writeFile(unreachable, kubeconfig(`https://127.0.0.1:${await closedPort()}`, "ctx"));
  await writeFile(noContext, kubeconfig("https://127.0.0.1:1", ""));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("bad arguments", () => {
  it.each([
    [
      ["get", "machines"],
      'error: unknown resource type "machines": expected one of clusters, nodepools, externalauths, managementclusters',
    ],
    [["describe", "nodepool", "x"], 'error: unknown resource type "nodepool": expected one of clusters'],
    [
      ["get", "clusters", "-o", "table"],
      'unknown output format "table": expected one of wide, json, yaml, name',
    ],
    [["describe", "cluster", "x", "-o", "wide"], 'unknown output format "wide": expected one of json, yaml'],
    [
      ["get", "clusters", "--phase", "Running"],
      'error: unknown phase "Running" for clusters: expected one of Pending, Provisioning, Ready',
    ],
    [
      ["get", "mc", "--phase", "Provisioning"],
      'error: unknown phase "Provisioning" for managementclusters: expected one of Pending, Ready, Full',
    ],
    [
      ["get", "clusters", "a", "-l", "x=y"],
      "error: names and a label selector (-l) cannot be given together",
    ],
    [["get", "clusters", "a", "-A"], "error: an object cannot be named across all namespaces (-A)"],
    [["describe", "cluster", "x", "--show-conditions", "Pods"], 'unknown kind "Pods" in --show-conditions'],
    [["describe", "cluster", "x", "--grouping=maybe"], 'expected true or false, got "maybe"'],
    [
      ["wait", "cluster", "x", "--for", "Ready"],
      'error: invalid --for "Ready": expected condition=TYPE[=STATUS] or delete',
    ],
    [
      ["wait", "cluster", "x", "--for", "delete", "--timeout", "20"],
      'error: invalid --timeout "20": expected a duration such as 30s, 20m or 1h30m',
    ],
    [["wait", "cluster", "x"], "error: required option '--for <condition>' not specified"],
    [["get"], "error: missing required argument 'resource'"],
    [["frobnicate"], "error: unknown command 'frobnicate'"],
    [["get", "clusters", "--colour"], "error: unknown option '--colour'"],
    [["trace", " "], "error: the correlation or client request id is empty"],
    [["trace", "x", "-o", "wide"], 'unknown output format "wide": expected one of json, yaml'],
    [["must-gather", "demo"], "error: required option '-o, --output <dir>' not specified"],
    [
      ["describe", "cluster", "x", "--from", "/nonexistent", "--watch"],
      "error: --watch follows the live cluster: it cannot be combined with --from",
    ],
    [
      ["describe", "cluster", "x", "--from", "/nonexistent"],
      "error: --from /nonexistent: no index.yaml: not a must-gather directory",
    ],
  ])("%j", async (argv, message) => {
    const r = await hcpctl(...argv, "--kubeconfig", join(dir, "never-read"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe("");
  });
});

describe("bad kubeconfig or server", () => {
  it.each([
    [
      ["--kubeconfig", "/nonexistent/kubeconfig"],
      "error: --kubeconfig /nonexistent/kubeconfig: no such file",
    ],
    [["--context", "prod"], 'error: context "prod" is not in the kubeconfig (it has: ctx)'],
  ])("%j", async (flags, message) => {
    const r = await hcpctl("get", "clusters", "--kubeconfig", unreachable, ...flags);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(message);
  });

  it("says the kubeconfig has no current context", async () => {
    const r = await hcpctl("get", "clusters", "--kubeconfig", noContext);
    expect(r.stderr.trim()).toBe(
      "error: the kubeconfig has no current context: pass --context (it has: ctx)",
    );
  });

  it.each([
    [["get", "clusters"]],
    [["describe", "cluster", "demo"]],
    [["wait", "cluster", "demo", "--for", "delete"]],
    [["trace", "corr-1"]],
    [["must-gather", "demo", "-o", "NEW"]],
  ])("names the server it cannot reach: %j", async (argv) => {
    const r = await hcpctl(
      ...argv.map((a) => (a === "NEW" ? join(dir, "gather-unreachable") : a)),
      "--kubeconfig",
      unreachable,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^error: cannot reach the API server at https:\/\/127\.0\.0\.1:\d+ \(context "ctx"\): connect ECONNREFUSED/,
    );
    expect(r.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  });
});

describe("must-gather and describe --from", () => {
  it("refuses a directory that is not empty before reading any kubeconfig", async () => {
    const out = join(dir, "not-empty");
    await mkdir(out);
    await writeFile(join(out, "notes.txt"), "mine");
    const r = await hcpctl("must-gather", "demo", "-o", out, "--kubeconfig", join(dir, "never-read"));
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: -o ${out}: the directory is not empty (1 entries, e.g. notes.txt): name a new or empty one, or pass --force to write into it\n`,
    });
  });

  it("draws a gathered cluster's tree with no kubeconfig at all, as of the gathering", async () => {
    const out = join(dir, "gathered");
    await mkdir(out);
    await writeGather(out, {
      snapshot: readySnapshot(),
      snapshotAt: "2026-09-01T12:00:00Z",
      events: new Map(),
      eventsAt: "2026-09-01T12:00:00Z",
      source: { server: "https://127.0.0.1:6443", context: "service" },
    });
    const r = await hcpctl(
      "describe",
      "cluster",
      "demo",
      "--from",
      out,
      "--kubeconfig",
      join(dir, "never-read"),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // SINCE is as of the gathering (the Ready condition changed 2 minutes before it), not as of now.
    expect(r.stdout).toMatch(
      /\nHcpCluster\/demo\s+True\s+AsExpected\s+2m\s+The cluster is ready on mgmt-1\n/,
    );
    // The cluster's external auths, each with its state, under a heading of their own.
    expect(r.stdout).toMatch(
      /\n├─ExternalAuths\n│ └─ExternalAuth\/entra\s+True\s+AsExpected\s+90s\s+HyperShift accepted the provider\n/,
    );
    const json = await hcpctl("describe", "cluster", "demo", "--from", out, "-o", "json");
    expect(JSON.parse(json.stdout)).toMatchObject({
      kind: "ClusterTree",
      observedAt: "2026-09-01T12:00:00Z",
    });
  });
});

describe("help", () => {
  it("names itself as invoked", async () => {
    const stdout = textSink();
    const code = await run(
      ["--help"],
      { stdout, stderr: textSink(), paint: plain, now: Date.now, signal: new AbortController().signal },
      "kubectl hcp",
    );
    expect(code).toBe(0);
    expect(stdout.text).toMatch(/^Usage: kubectl hcp \[options\] \[command\]/);
    expect(stdout.text).toContain("describe [options] <resource> <name>");
  });
});
