/**
 * `npm run local` as a person uses it: start it, watch the sample cluster it applies become Ready,
 * read the kubeconfig paths it prints, ask kubectl about HcpClusters and HostedClusters, find the
 * sample's usage in the ledger it prints (and run the hcpctl usage command it prints), press
 * Ctrl-C, and find nothing left running.
 */
import { execFile, spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it, onTestFailed } from "vitest";
import { isAlive } from "../../hack/harness/process.ts";
import { eventually, scratchDir } from "../support/fixtures.ts";
import { kubectlPath } from "../support/region.ts";

const exec = promisify(execFile);
const localScript = fileURLToPath(new URL("../../hack/local.ts", import.meta.url));

describe("npm run local", () => {
  it("brings up a region kubectl can use and tears it all down on Ctrl-C", async () => {
    const state = await scratchDir("local");
    const child = spawn(process.execPath, [localScript], {
      env: { ...process.env, HCP_LOCAL_DIR: state.path, HCP_MANAGEMENT_CLUSTERS: "2" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    // A failed assertion must not leave the region running.
    onTestFailed(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGINT");
      await new Promise((resolve) => child.once("exit", resolve));
    });
    const output: string[] = [];
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout }).on("line", (line) => {
        output.push(line);
        if (line.startsWith("Press Ctrl-C")) resolve();
      });
      child.once("exit", (code) =>
        reject(new Error(`npm run local exited early (${code}): ${output.join("\n")}`)),
      );
    });
    const printed = output.join("\n");
    for (const name of ["service", "mgmt-1", "mgmt-2"])
      expect(printed).toContain(join(state.path, `${name}.kubeconfig`));

    const kubectl = (cluster: string, ...args: string[]) =>
      exec(kubectlPath(), ["--kubeconfig", join(state.path, `${cluster}.kubeconfig`), ...args]);
    expect(printed).toContain("The sample cluster is Ready");
    const hcp = await kubectl("service", "get", "hcpclusters", "-A");
    expect(hcp.stdout).toMatch(/default\s+demo\s+4\.19\.7\s+Ready\s+True/);
    const hosted = await Promise.all(
      ["mgmt-1", "mgmt-2"].map((m) => kubectl(m, "get", "hostedclusters.hypershift.openshift.io", "-A")),
    );
    expect(hosted.map((h) => h.stdout).join("\n")).toContain("demo");
    await kubectl("mgmt-2", "get", "appliedmanifestworks.work.open-cluster-management.io");
    // The RBAC a region deploys, from the same bases.
    const roles = await kubectl(
      "service",
      "get",
      "clusterroles",
      "hcp-operators",
      "hcp-frontend",
      "-o",
      "name",
    );
    expect(roles.stdout.trim().split("\n")).toHaveLength(2);
    await kubectl("mgmt-1", "get", "clusterrole", "maestro-agent");

    // The ARM frontend logs to the file it printed, as the other components do: a write through
    // the printed curl commands leaves a line with its correlation ID there.
    const logPath = /frontend log: (\S+)/.exec(printed)?.[1] ?? "";
    const correlationId = `local-log-${Date.now()}`;
    const curl = async (what: RegExp): Promise<string> => {
      const command = output.find((l) => what.test(l))?.trim() ?? "";
      expect(command, `a printed curl command matching ${what}`).toMatch(/^curl /);
      const probe = `${command} -sS -o /dev/null -w '%{http_code}' -H 'x-ms-correlation-request-id: ${correlationId}'`;
      return (await exec("sh", ["-c", probe])).stdout;
    };
    expect(await curl(/-X PUT '[^']*\/subscriptions\/[^/']*\?/)).toMatch(/^20[01]$/);
    expect(await curl(/-X PUT '[^']*\/hcpOpenShiftClusters\/armdemo\?/)).toBe("201");
    await eventually("the frontend's log line of the ARM write", async () =>
      (await readFile(logPath, "utf8").catch(() => "")).includes(`"correlationRequestId":"${correlationId}"`),
    );

    // Metering: the recorder wrote the Ready sample's billing record and opened its control-plane
    // segment in the printed ledger, the exporter made its first pass (the roll-up's mark), and
    // the printed hcpctl command reads that ledger.
    const ledgerUrl = /usage ledger +(postgres\S+)/.exec(printed)?.[1] ?? "";
    expect(printed).toMatch(/Marketplace metering +https:\/\/127\.0\.0\.1:\d+ /);
    const ledger = new pg.Client({ connectionString: ledgerUrl });
    await ledger.connect();
    try {
      await eventually(
        "the sample's billing record, its open control-plane segment and an export pass",
        async () => {
          const { rows } = await ledger.query<{ succeeded: boolean; open: number; passed: boolean }>(
            `SELECT b.first_succeeded_at IS NOT NULL AS succeeded,
                  (SELECT count(*)::int FROM usage_segments s WHERE s.cluster_id = b.cluster_id
                      AND s.dimension = 'controlPlaneHours' AND s.ended_at IS NULL) AS open,
                  (SELECT rolled_up_to IS NOT NULL FROM rollup_state) AS passed
             FROM billing_records b WHERE lower(b.resource_id) LIKE '%/resourcegroups/default/%/hcpopenshiftclusters/demo'`,
          );
          return rows.length === 1 && rows[0]?.succeeded === true && rows[0].open === 1 && rows[0].passed;
        },
      );
    } finally {
      await ledger.end();
    }
    const usage = output
      .find((l) => l.includes("npm run hcpctl -- usage --database-url"))
      ?.replace(/^\s*Try:\s*/, "");
    expect(usage).toContain(ledgerUrl);
    await exec("sh", ["-c", usage ?? "false"], { cwd: fileURLToPath(new URL("../..", import.meta.url)) });

    const workDir = /work dir: (\S+)/.exec(printed)?.[1] ?? "";
    const pids = await childPids(workDir);
    // The portal, the gate and the people who sign in (Dex) are printed.
    expect(printed).toMatch(/SRE portal\s+https:\/\/127\.0\.0\.1:\d+/);
    expect(printed).toMatch(/session gate\s+https:\/\/127\.0\.0\.1:\d+/);
    for (const who of ["alice", "bob", "carol", "victor"]) expect(printed).toContain(`${who}@example.com`);
    // etcd + three kube-apiservers + three kube-controller-managers + mosquitto + PostgreSQL + Dex
    // + the sample cluster's own kube-apiserver (its hosted API, reached through the session gate)
    expect(pids.length).toBe(11);
    child.kill("SIGINT");
    const code = await new Promise<number | null>((r) => child.once("exit", r));
    expect(code).toBe(0);
    expect(pids.filter(isAlive)).toEqual([]);
    await state.remove();
  });
});

async function childPids(workDir: string): Promise<number[]> {
  const files = (await readdir(workDir)).filter((f) => f.endsWith(".pid") && f !== "owner.pid");
  return Promise.all(files.map(async (f) => Number((await readFile(join(workDir, f), "utf8")).trim())));
}
