/**
 * Reading kubeconfigs without client-node: which server and credentials each shape gives, that
 * what only client-node handles (an exec plugin) is handed to it, and that errors name what is
 * wrong. Requests against a real apiserver: test/integration/kubeconfig.test.ts.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dump } from "js-yaml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inClusterAccess, loadClusterAccess } from "./kubeconfig.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "kubeconfig-test-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
  return dump({
    apiVersion: "v1",
    kind: "Config",
    "current-context": "ctx",
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443/", ...cluster } }],
    users: [{ name: "u", user }],
  });
}

const authorization = async (yaml: string): Promise<string | undefined> =>
  (await loadClusterAccess({ yaml }).authenticate()).headers["Authorization"];

describe("loadClusterAccess", () => {
  it("reads the current context's server, without a trailing slash", () => {
    expect(loadClusterAccess({ yaml: kubeconfig({ token: "t" }) }).server).toBe("https://127.0.0.1:6443");
  });

  it("sends a static token, a basic credential, or nothing", async () => {
    expect(await authorization(kubeconfig({ token: "abc" }))).toBe("Bearer abc");
    expect(await authorization(kubeconfig({ username: "u", password: "p" }))).toBe(
      `Basic ${Buffer.from("u:p").toString("base64")}`,
    );
    expect(await authorization(kubeconfig({}))).toBeUndefined();
  });

  it("reads a token file again once a minute has passed, as kubelet rotates bound tokens", async () => {
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "first\n");
    let now = 0;
    const access = loadClusterAccess({ yaml: kubeconfig({ tokenFile }) }, () => now);
    expect((await access.authenticate()).headers["Authorization"]).toBe("Bearer first");
    await writeFile(tokenFile, "second\n");
    now = 59_000;
    expect((await access.authenticate()).headers["Authorization"]).toBe("Bearer first");
    now = 60_000;
    expect((await access.authenticate()).headers["Authorization"]).toBe("Bearer second");
    // Gone for a moment (kubelet swapping it): the token it had stands.
    await rm(tokenFile);
    now = 120_000;
    expect((await access.authenticate()).headers["Authorization"]).toBe("Bearer second");
  });

  it("resolves a file's relative paths against the kubeconfig's folder", async () => {
    await writeFile(join(dir, "token"), "relative");
    const path = join(dir, "config");
    await writeFile(path, kubeconfig({ tokenFile: "token" }));
    expect((await loadClusterAccess({ path }).authenticate()).headers["Authorization"]).toBe(
      "Bearer relative",
    );
  });

  it("uses one connection pool for every request", async () => {
    const access = loadClusterAccess({ yaml: kubeconfig({ token: "t" }) });
    const [a, b] = await Promise.all([access.authenticate(), access.authenticate()]);
    expect(a.dispatcher).toBe(b.dispatcher);
  });

  it("hands an exec plugin to client-node, which runs it for the token", async () => {
    const plugin = join(dir, "plugin.mjs");
    const credential = {
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: "from-exec" },
    };
    await writeFile(plugin, `process.stdout.write(${JSON.stringify(JSON.stringify(credential))});\n`);
    const exec = {
      apiVersion: "client.authentication.k8s.io/v1",
      command: process.execPath,
      args: [plugin],
      interactiveMode: "Never",
    };
    const access = loadClusterAccess({ yaml: kubeconfig({ exec }) });
    expect(access.server).toBe("https://127.0.0.1:6443");
    expect((await access.authenticate()).headers["Authorization"]).toBe("Bearer from-exec");
  });

  it("merges the files KUBECONFIG lists, the first to name a context or entry winning", async () => {
    const first = join(dir, "first");
    const second = join(dir, "second");
    await writeFile(
      first,
      dump({ "current-context": "ctx", users: [{ name: "u", user: { token: "first" } }] }),
    );
    await writeFile(second, kubeconfig({ token: "second" }));
    const saved = process.env["KUBECONFIG"];
    process.env["KUBECONFIG"] = `${first}:${join(dir, "missing")}:${second}`;
    try {
      const access = loadClusterAccess({ default: true });
      expect(access.server).toBe("https://127.0.0.1:6443");
      expect((await access.authenticate()).headers["Authorization"]).toBe("Bearer first");
    } finally {
      if (saved === undefined) delete process.env["KUBECONFIG"];
      else process.env["KUBECONFIG"] = saved;
    }
  });

  it("says which entry is missing or incomplete", () => {
    const noUser = dump({
      "current-context": "ctx",
      contexts: [{ name: "ctx", context: { cluster: "c", user: "ghost" } }],
      clusters: [{ name: "c", cluster: { server: "https://x" } }],
    });
    expect(() => loadClusterAccess({ yaml: noUser })).toThrow(/user "ghost", which it does not define/);
    expect(() => loadClusterAccess({ yaml: kubeconfig({}, { server: "" }) })).toThrow(
      /cluster "c" has no server/,
    );
    expect(() => loadClusterAccess({ yaml: "just text" })).toThrow(/not a YAML mapping/);
    expect(() => loadClusterAccess({ path: join(dir, "absent") })).toThrow(/ENOENT/);
  });
});

describe("inClusterAccess", () => {
  it("takes the service's address (IPv6 in brackets) and the mounted token and CA", async () => {
    await writeFile(join(dir, "token"), "pod-token");
    await writeFile(join(dir, "ca.crt"), "not parsed here");
    const env = { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" };
    const access = inClusterAccess(env, dir);
    expect(access?.server).toBe("https://[fd00::1]:443");
    expect((await access!.authenticate()).headers["Authorization"]).toBe("Bearer pod-token");
  });

  it("is undefined outside a pod, and fails at once when the token is not mounted", () => {
    expect(inClusterAccess({}, dir)).toBeUndefined();
    expect(() =>
      inClusterAccess({ KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" }, dir),
    ).toThrow(/ENOENT/);
  });
});
