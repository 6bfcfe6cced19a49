import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const exec = promisify(execFile);
const entry = fileURLToPath(new URL("./hcp-operators.ts", import.meta.url));

async function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [entry, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("hcp-operators", () => {
  it("hands the component its own flags: the subcommand is not one of them", async () => {
    // Each main rejects an unknown positional argument, so reaching its own check proves the strip.
    const agent = await run("maestro-agent", "--consumer", "mgmt-1");
    expect(agent.code).toBe(1);
    expect(agent.stderr).toContain("maestro-agent: Error: --consumer and --broker-url are required");
    const frontend = await run("frontend", "--listen", "127.0.0.1:0");
    expect(frontend.stderr).toContain("--tls-cert, --tls-key and --client-ca are required");
    const portal = await run("portal", "--listen", "127.0.0.1:0");
    expect(portal.stderr).toContain("portal: --public-url is required");
    const gate = await run("gate", "--listen", "127.0.0.1:0");
    expect(gate.stderr).toContain("gate: --gate-oidc-issuer is required");
  });

  it("names an unknown component and the ones there are", async () => {
    const bogus = await run("simulator");
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('unknown component "simulator"');
    expect(bogus.stderr).toContain(
      "usage: hcp-operators <operators|frontend|maestro-agent|portal|gate> [flags]",
    );
    expect((await run()).stderr).toContain("no component given");
    expect(await run("--help")).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("usage:") as string,
    });
  });
});
