/** API server refusals answered as CloudErrors without the CR's shape. */
import { describe, expect, it } from "vitest";
import { KubeApiError } from "../runtime/kube.ts";
import { cloudErrorFromKube } from "./service-cluster.ts";

describe("API server refusals", () => {
  const kubeRefusal = (code: number, causes: Array<{ field?: string; message?: string }>, message = "") =>
    new KubeApiError(code, "Invalid", message, { kind: "Status", message, details: { causes } });

  it("answers the API server's refusals without the CR's shape: unmapped fields are named generically", () => {
    const refusal = cloudErrorFromKube(
      kubeRefusal(422, [
        { field: "<nil>", message: 'Invalid value: "object": no such key: metadata.labels' },
        { field: "metadata.annotations", message: "Too long: must have at most 262144 bytes" },
        { field: "spec.network.podCidr", message: "spec.network.podCidr must be a valid IPv4 CIDR" },
        { field: "spec.dns", message: 'Invalid value: "object": failed rule: self == oldSelf' },
      ]),
    );
    const body = JSON.stringify(refusal?.body);
    expect(refusal?.status).toBe(400);
    expect(body).not.toMatch(/<nil>|metadata|annotation|oldSelf|\bspec\./);
    expect(refusal?.body.details?.map((d) => d.target)).toEqual([
      undefined,
      undefined,
      "properties.network.podCidr",
      "properties.dns",
    ]);
    expect(refusal?.body.details?.map((d) => d.message)).toEqual([
      expect.stringContaining("could not be stored"),
      expect.stringContaining("too large to store"),
      "properties.network.podCidr must be a valid IPv4 CIDR",
      "Field 'properties.dns' cannot be changed after creation",
    ]);
    const whole = cloudErrorFromKube(
      kubeRefusal(422, [], 'HcpCluster.hcp.aro.dev "x" is invalid: metadata.annotations: Too long'),
    );
    expect(whole?.body.message).not.toMatch(/metadata|HcpCluster/);
  });

  it("answers the API server's 413 and etcd's size refusal with a 413", () => {
    for (const err of [
      new KubeApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728", {}),
      new KubeApiError(500, "InternalError", "etcdserver: request is too large", {}),
    ])
      expect(cloudErrorFromKube(err)).toMatchObject({ status: 413, body: { code: "InvalidResource" } });
  });
});
