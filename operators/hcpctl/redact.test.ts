import { describe, expect, it } from "vitest";
import { clusterWork } from "../../test/support/hcpctl-objects.ts";
import { isSecretKey, redact, redacted } from "./redact.ts";

const PULL_SECRET = '{"auths":{"registry.example.com":{"auth":"c2VjcmV0LXZhbHVlLTQyCg=="}}}';
const base64 = (s: string) => Buffer.from(s).toString("base64");

describe("redact", () => {
  it("replaces a Secret manifest's data and stringData in a work, and says where", () => {
    const work = clusterWork();
    const secret = work.spec!.workload!.manifests![1]!;
    secret["data"] = { ".dockerconfigjson": base64(PULL_SECRET) };
    secret["stringData"] = { token: "s3cr3t" };
    const { value, paths } = redact(work);
    const out = value.spec!.workload!.manifests![1]!;
    expect(out["data"]).toEqual({ ".dockerconfigjson": redacted(Buffer.byteLength(PULL_SECRET)) });
    expect(out["stringData"]).toEqual({ token: redacted(6) });
    expect(paths).toEqual([
      '.spec.workload.manifests[1].data[".dockerconfigjson"]',
      ".spec.workload.manifests[1].stringData.token",
    ]);
    expect(JSON.stringify(value)).not.toContain(base64(PULL_SECRET));
    // The rest is untouched, and so is the input.
    expect(value.spec!.workload!.manifests![2]).toEqual(work.spec!.workload!.manifests![2]);
    expect(secret["stringData"]).toEqual({ token: "s3cr3t" });
    expect(value.status).toEqual(work.status);
  });

  it("replaces strings under secret-like keys at any depth, not references to secrets", () => {
    const { value, paths } = redact({
      spec: {
        pullSecret: { name: "pull-secret" },
        credentialsSecretName: "cloud-provider",
        identity: { clientSecret: "abc", bearer_token: "def", "client-key-data": "ghi", password: "" },
        list: [{ apiKey: "jkl" }],
        secretRef: { name: "x" },
      },
    });
    expect(value.spec).toEqual({
      pullSecret: { name: "pull-secret" },
      credentialsSecretName: "cloud-provider",
      identity: {
        clientSecret: redacted(3),
        bearer_token: redacted(3),
        "client-key-data": redacted(3),
        password: "",
      },
      list: [{ apiKey: redacted(3) }],
      secretRef: { name: "x" },
    });
    expect(paths).toEqual([
      ".spec.identity.clientSecret",
      ".spec.identity.bearer_token",
      '.spec.identity["client-key-data"]',
      ".spec.list[0].apiKey",
    ]);
  });

  it("looks inside annotations that hold JSON, and leaves them byte for byte when nothing is secret", () => {
    const applied = JSON.stringify({ kind: "Secret", apiVersion: "v1", data: { key: base64("hunter2") } });
    const envelope = JSON.stringify({ tags: { team: "a" } });
    const { value, paths } = redact({
      metadata: {
        annotations: {
          "kubectl.kubernetes.io/last-applied-configuration": applied,
          "hcp.aro.dev/arm-envelope": envelope,
        },
      },
    });
    const a = value.metadata.annotations;
    expect(JSON.parse(a["kubectl.kubernetes.io/last-applied-configuration"])).toMatchObject({
      data: { key: redacted(7) },
    });
    expect(a["hcp.aro.dev/arm-envelope"]).toBe(envelope);
    expect(paths).toEqual([
      '.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]<json>.data.key',
    ]);
  });

  it.each([
    ["password", true],
    ["clientSecret", true],
    ["pullSecret", true],
    ["sshPrivateKey", true],
    [".dockerconfigjson", true],
    ["kubeconfig", true],
    ["credentials", true],
    ["credentialsSecretName", false],
    ["secretRef", false],
    ["tokenPath", false],
    ["name", false],
    ["keyVault", false],
  ])("isSecretKey(%j) is %s", (key, expected) => {
    expect(isSecretKey(key)).toBe(expected);
  });
});
