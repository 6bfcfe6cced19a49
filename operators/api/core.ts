/** The core (v1) kinds the controllers, harness and tests read and write, described once. */
import type { ResourceType } from "./meta/v1.ts";

export const NamespaceResource = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
} as const satisfies ResourceType;

export const ConfigMapResource = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
} as const satisfies ResourceType;

export const SecretResource = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
} as const satisfies ResourceType;
