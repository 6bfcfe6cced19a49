import { describe, expect, it } from "vitest";
import { runHcpctl } from "../../test/support/hcpctl-run.ts";
import { ReleaseCatalog } from "../releases/catalog.ts";
import { planVersion, type PlanInput } from "../releases/plan.ts";
import { plain } from "./paint.ts";
import { renderPlan, upgradePlan } from "./render-plan.ts";

const catalog = ReleaseCatalog.parse(`
releases:
  - {version: 4.18.22, image: "img:4.18.22", endOfLifeTimestamp: "2026-08-25T00:00:00Z"}
  - {version: 4.19.7, image: "img:4.19.7"}
  - {version: 4.19.9, image: "img:4.19.9", upgradesFrom: [4.19.7]}
  - {version: 4.20.2, image: "img:4.20.2", upgradesFrom: [4.19.9]}
`);
const now = Date.parse("2026-11-27T00:00:00Z");

function render(to: string, runs: string, pools: PlanInput["pools"] = []): string {
  const plan = planVersion({ catalog, version: { id: to }, running: runs, pools, now });
  return renderPlan(
    upgradePlan({ namespace: "ns", name: "demo", to, upgradePolicy: "Manual", runs, plan }),
    plain,
  );
}

describe("hcpctl upgrade plan, rendered", () => {
  it("shows each hop, what each pool does and that nothing holds it", () => {
    expect(render("4.20", "4.19.7", [{ name: "workers" }, { name: "mid", version: "4.18.22" }])).toBe(
      [
        "Cluster:         ns/demo",
        "Channel group:   stable",
        "Upgrade policy:  Manual",
        "Runs:            4.19.7",
        "Version:         4.20 → 4.20.2",
        "",
        "Path (2 hops, one at a time):",
        "  1.  4.19.7 → 4.19.9  patch  img:4.19.9",
        "  2.  4.19.9 → 4.20.2  minor  img:4.20.2",
        "",
        "Node pools:",
        "  workers  follows  rolls  follows the control plane: rolls after it, hop by hop",
        "  mid      4.18.22  stays  keeps its own version 4.18.22",
        "",
        "Allowed: nothing holds the upgrade",
        "",
      ].join("\n"),
    );
  });

  it("names the pool to upgrade first and why, and what refuses the upgrade", () => {
    const text = render("4.20", "4.19.7", [{ name: "old", version: "4.17.3" }]);
    expect(text).toContain(
      "  old  4.17.3  upgrade first  nodes on 4.17 may run at most 2 minor versions behind their control plane on 4.20: upgrade it to 4.18 or newer first\n",
    );
    expect(text).toContain(
      "Refused:\n  NodePoolsTooFarBehind  Version 4.20.2 would leave node pools too far behind; upgrade them first (node pool old:",
    );
  });

  it("says when the release that runs is past its end of life, and why a target is refused", () => {
    expect(render("4.19", "4.18.22")).toContain(
      "Runs:            4.18.22 (past its end of life since 2026-08-25)\n",
    );
    const skipped = render("4.20", "4.18.22");
    expect(skipped).not.toContain("Path");
    expect(skipped).toContain(
      "Refused:\n  UpgradeSkipsMinor  4.20 cannot be reached from 4.18.22: a cluster on 4.18 moves one minor version at a time: to 4.19 first, then on to 4.20\n",
    );
  });

  it("refuses a --to that is no version, before it reads a kubeconfig", async () => {
    const r = await runHcpctl("upgrade", "plan", "demo", "--to", "latest", "--kubeconfig", "/nonexistent");
    expect(r).toMatchObject({
      code: 1,
      stderr: 'error: --to "latest" is not an OpenShift version such as 4.20 or 4.20.2\n',
    });
  });
});
