/**
 * The alerts in config/monitoring hold together: every PrometheusRule the kustomization lists
 * loads; every alert has a severity, a summary, a description and a runbook_url naming a runbook
 * in config/monitoring/runbooks/ that exists, is about that alert and shows the `hcpctl` commands
 * to run (each a command, subcommand or resource, and flag hcpctl's own program has); every metric an expression reads is one
 * the code under operators/ registers; and every expression parses: with promtool when there is
 * one (PROMTOOL, PATH, or hack/build-promtool.sh's cache), else a bracket check only.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Command } from "commander";
import { dump, load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../operators/hcpctl/cli.ts";
import { plain } from "../../operators/hcpctl/paint.ts";
import { resolveResource } from "../../operators/hcpctl/resources.ts";

const exec = promisify(execFile);
const repo = fileURLToPath(new URL("../../", import.meta.url));
const monitoring = join(repo, "config/monitoring");
const runbooks = join(monitoring, "runbooks");

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface PrometheusRule {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { groups: Array<{ name: string; rules: Rule[] }> };
}

function ruleFiles(): Array<{ file: string; doc: PrometheusRule }> {
  const kustomization = load(readFileSync(join(monitoring, "kustomization.yaml"), "utf8")) as {
    resources: string[];
  };
  return kustomization.resources.map((file) => ({
    file,
    doc: load(readFileSync(join(monitoring, file), "utf8")) as PrometheusRule,
  }));
}

const alerts = (): Rule[] => ruleFiles().flatMap(({ doc }) => doc.spec.groups.flatMap((g) => g.rules));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
    .map((e) => join(e.parentPath, e.name));
}

/**
 * The metric names the product registers: the `name` of every counter, gauge and histogram
 * created through operators/runtime/metrics.ts (histograms add _bucket, _sum and _count).
 */
function registeredMetrics(): Set<string> {
  const names = new Set<string>();
  for (const file of sourceFiles(join(repo, "operators"))) addMetricsOf(readFileSync(file, "utf8"), names);
  return names;
}

function addMetricsOf(text: string, names: Set<string>): void {
  const created = /\b(counter|gauge|histogram)\(\s*[\w.]+\s*,\s*\{\s*name:\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"/g;
  const probed = /\binProgressGauge\(\s*[\w.]+\s*,\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"/g;
  for (const [, kind = "", name = ""] of text.matchAll(created)) {
    names.add(name);
    if (kind === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(name + suffix);
  }
  for (const [, name = ""] of text.matchAll(probed)) names.add(name);
}

const KEYWORDS = new Set([
  "and",
  "or",
  "unless",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "offset",
]);

/** The metric names an expression selects: identifiers that are not functions, keywords, labels or durations. */
function metricNames(expr: string): string[] {
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names: string[] = [];
  for (const m of s.matchAll(/(?<![\w:.])[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const token = m[0];
    const rest = s.slice((m.index ?? 0) + token.length).trimStart();
    if (KEYWORDS.has(token) || rest.startsWith("(")) continue;
    names.push(token);
  }
  return names;
}

function balanced(expr: string): boolean {
  const pairs: Record<string, string> = { ")": "(", "]": "[", "}": "{" };
  const stack: string[] = [];
  for (const ch of expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')) {
    if ("([{".includes(ch)) stack.push(ch);
    else if (ch in pairs && stack.pop() !== pairs[ch]) return false;
  }
  return stack.length === 0;
}

/** A binary the hack/ scripts cached under ~/.cache/hcp-operators/<tool>/<version>/, if any. */
function cached(tool: string, binary: string): string | undefined {
  const root = join(homedir(), ".cache/hcp-operators", tool);
  if (!existsSync(root)) return undefined;
  return readdirSync(root)
    .map((v) => join(root, v, binary))
    .find((p) => existsSync(p));
}

/** promtool where PROMTOOL says, on PATH, or built by hack/build-promtool.sh. */
function promtool(): string | undefined {
  if (process.env["PROMTOOL"]) return process.env["PROMTOOL"];
  for (const dir of (process.env["PATH"] ?? "").split(":")) {
    const candidate = join(dir, "promtool");
    if (dir && existsSync(candidate)) return candidate;
  }
  return cached("promtool", "promtool");
}

/** hcpctl's commander program, as the bin builds it (nothing is run). */
function hcpctlProgram(): Command {
  const io = { stdout: process.stdout, stderr: process.stderr, paint: plain, now: Date.now };
  return buildProgram({ ...io, signal: new AbortController().signal }, "hcpctl");
}

const flagsOf = (c: Command | undefined): string[] =>
  (c?.options ?? []).flatMap((o) => [o.long, o.short]).filter((f): f is string => f !== undefined);

/** The command of a runbook's line is hcpctl's, with its subcommand (or resource) and flags. */
function expectHcpctlHas(program: Command, line: string, where: string): void {
  const [, command = "", next = ""] = /hcpctl ([a-z-]+) ([a-z-]+)/.exec(line) ?? [];
  const cmd = program.commands.find((c) => c.name() === command);
  expect(cmd, where).toBeDefined();
  const sub = cmd?.commands.find((c) => c.name() === next);
  if (cmd?.commands.length) expect(sub, where).toBeDefined();
  else if (!next.startsWith("-")) {
    const kind = command === "get" ? next : next === "cluster" ? "clusters" : next;
    expect(() => resolveResource(kind), where).not.toThrow();
  }
  const known = [...flagsOf(program), ...flagsOf(cmd), ...flagsOf(sub)];
  for (const flag of line.match(/(?<=\s)--?[a-zA-Z-]+/g) ?? [])
    expect(known, `${where}: ${flag}`).toContain(flag);
}

describe("config/monitoring", () => {
  it("lists PrometheusRules that load, with at least one alert each", () => {
    for (const { file, doc } of ruleFiles()) {
      expect(doc, file).toMatchObject({ apiVersion: "monitoring.coreos.com/v1", kind: "PrometheusRule" });
      expect(doc.spec.groups.flatMap((g) => g.rules).length, file).toBeGreaterThan(0);
    }
  });

  it("builds with kustomize into the PrometheusRules it lists", async () => {
    const kubectl = cached("k8s", "kubectl");
    if (!kubectl) return;
    const { stdout } = await exec(kubectl, ["kustomize", monitoring]);
    expect(stdout.match(/^kind: PrometheusRule$/gm)).toHaveLength(ruleFiles().length);
  });

  it("gives every alert a unique name, a severity, a summary, a description and its runbook", () => {
    const names = alerts().map((r) => r.alert);
    expect(new Set(names).size).toBe(names.length);
    for (const rule of alerts()) {
      const alert = rule.alert ?? "";
      expect(alert, JSON.stringify(rule)).toMatch(/^[A-Z][A-Za-z0-9]+$/);
      expect(["critical", "warning", "info"], alert).toContain(rule.labels?.["severity"]);
      expect(rule.annotations?.["summary"], alert).toBeTruthy();
      expect(rule.annotations?.["description"], alert).toBeTruthy();
      expect(rule.annotations?.["runbook_url"], alert).toBe(`config/monitoring/runbooks/${alert}.md`);
      const runbook = readFileSync(join(repo, rule.annotations?.["runbook_url"] ?? ""), "utf8");
      expect(runbook.split("\n")[0], alert).toBe(`# ${alert}`);
      expect(runbook, alert).toMatch(/\nhcpctl \w+|\n {3}hcpctl \w+/);
    }
  });

  it("has a runbook only for alerts that exist", () => {
    const named = new Set(alerts().map((r) => `${r.alert ?? ""}.md`));
    expect(readdirSync(runbooks).filter((f) => !named.has(f))).toEqual([]);
  });

  it("shows only hcpctl commands, resources and flags hcpctl has", () => {
    const program = hcpctlProgram();
    for (const file of readdirSync(runbooks)) {
      const text = readFileSync(join(runbooks, file), "utf8");
      for (const line of text.split("\n").filter((l) => /(^|`|\s)hcpctl /.test(l)))
        expectHcpctlHas(program, line, `${file}: ${line.trim()}`);
    }
  });

  it("reads only metrics the code registers", () => {
    const registered = registeredMetrics();
    expect(registered.size).toBeGreaterThan(20);
    for (const rule of alerts()) {
      const used = metricNames(rule.expr);
      expect(used.length, rule.alert).toBeGreaterThan(0);
      for (const name of used) expect([...registered], `${rule.alert ?? ""} reads ${name}`).toContain(name);
    }
  });

  it("has expressions that parse", async () => {
    for (const rule of alerts()) expect(balanced(rule.expr), rule.alert).toBe(true);
    const tool = promtool();
    if (!tool) return;
    const dir = mkdtempSync(join(tmpdir(), "hcp-rules-"));
    for (const { file, doc } of ruleFiles()) {
      const plain = join(dir, file.replace(/\//g, "_"));
      writeFileSync(plain, dump({ groups: doc.spec.groups }));
      const { stdout } = await exec(tool, ["check", "rules", plain]);
      expect(stdout, relative(repo, plain)).toContain("SUCCESS");
    }
  });
});

describe("metricNames", () => {
  it.each([
    [
      'max by (kind) (hcp_operation_oldest_seconds{operation="create"}) > 20 * 60',
      ["hcp_operation_oldest_seconds"],
    ],
    [
      'sum(rate(a_total{code=~"5..|error"}[10m])) / sum by (x) (rate(a_total[10m])) > 0.1',
      ["a_total", "a_total"],
    ],
    ['(max(up{job="x"}) < 1) or absent(up{job="x"})', ["up", "up"]],
    ["x_bucket offset 5m", ["x_bucket"]],
  ])("finds the metrics of %s", (expr, names) => {
    expect(metricNames(expr)).toEqual(names);
  });
});
