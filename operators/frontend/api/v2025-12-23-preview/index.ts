/**
 * 2025-12-23-preview ⇄ the internal model: its cluster and node pool have the model's shape; an
 * external auth's read-only state is still 2024-06-10-preview's one `condition`.
 */
import type { ClusterProperties, NodePoolProperties } from "../internal.ts";
import { externalAuth } from "../v2024-06-10-preview/index.ts";
import { registered, sameShape, type ApiVersionDefinition } from "../version.ts";
import { SCHEMAS } from "./schema.ts";

export const v2025_12_23_preview: ApiVersionDefinition<"2025-12-23-preview", typeof SCHEMAS> = {
  name: "2025-12-23-preview",
  schemas: SCHEMAS,
  conversions: {
    cluster: sameShape<ClusterProperties>(),
    nodePool: sameShape<NodePoolProperties>(),
    externalAuth: registered(externalAuth),
  },
  acceptsCredentialCsr: false,
};
