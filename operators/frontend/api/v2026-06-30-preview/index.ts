/** 2026-06-30-preview ⇄ the internal model: every kind has the model's shape. */
import type { ClusterProperties, ExternalAuthProperties, NodePoolProperties } from "../internal.ts";
import { sameShape, type ApiVersionDefinition } from "../version.ts";
import { SCHEMAS } from "./schema.ts";

export const v2026_06_30_preview: ApiVersionDefinition<"2026-06-30-preview", typeof SCHEMAS> = {
  name: "2026-06-30-preview",
  schemas: SCHEMAS,
  conversions: {
    cluster: sameShape<ClusterProperties>(),
    nodePool: sameShape<NodePoolProperties>(),
    externalAuth: sameShape<ExternalAuthProperties>(),
  },
  acceptsCredentialCsr: false,
};
