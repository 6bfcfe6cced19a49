import { describe, expect, it } from "vitest";
import { hostedClusterFixture } from "../../test/support/hypershift.ts";
import {
  DEFAULT_FAILURE_REASON,
  FAIL_ANNOTATION,
  apiServerHost,
  failureOf,
  parseReleaseImage,
} from "./release.ts";

describe("parseReleaseImage", () => {
  it.each([
    ["quay.io/openshift-release-dev/ocp-release:4.19.7-multi", "4.19.7", "Multi"],
    ["quay.io/openshift-release-dev/ocp-release:4.19.7-x86_64", "4.19.7", "AMD64"],
    ["quay.io/openshift-release-dev/ocp-release:4.20.0-ec.3-aarch64", "4.20.0-ec.3", "ARM64"],
    ["registry.local:5000/ocp/release:4.18.1", "4.18.1", "AMD64"],
    ["quay.io/openshift-release-dev/ocp-release@sha256:0123abcd", undefined, "AMD64"],
    ["registry.local:5000/ocp/release:latest", undefined, "AMD64"],
  ])("%s → %s %s", (image, version, arch) => {
    expect(parseReleaseImage(image)).toEqual({ version, arch });
  });
});

describe("failureOf", () => {
  it.each([
    [undefined, undefined],
    ["EtcdQuorumLost: etcd lost quorum", { reason: "EtcdQuorumLost", message: "etcd lost quorum" }],
    ["Broken:", { reason: "Broken", message: "Broken" }],
    ["no reason here", { reason: DEFAULT_FAILURE_REASON, message: "no reason here" }],
    ["bad reason!: text", { reason: DEFAULT_FAILURE_REASON, message: "bad reason!: text" }],
  ])("%s", (value, expected) => {
    expect(failureOf(value === undefined ? {} : { [FAIL_ANNOTATION]: value })).toEqual(expected);
  });
});

describe("apiServerHost", () => {
  it("prefers spec.kubeAPIServerDNSName, else api.<baseDomainPrefix>.<baseDomain>", () => {
    const hc = hostedClusterFixture("ns", "demo");
    expect(apiServerHost(hc)).toBe("api.demo.example.com");
    hc.spec.kubeAPIServerDNSName = "api.custom.example.org";
    expect(apiServerHost(hc)).toBe("api.custom.example.org");
  });
});
