/**
 * 2026-09-01-preview, the newest in ARO HCP's spec: 2026-06-30-preview's bodies, and a
 * requestAdminCredential that may carry the client's own certificate signing request.
 */
import { v2026_06_30_preview } from "../v2026-06-30-preview/index.ts";
import type { ApiVersionDefinition } from "../version.ts";

export const v2026_09_01_preview: ApiVersionDefinition<
  "2026-09-01-preview",
  typeof v2026_06_30_preview.schemas
> = {
  ...v2026_06_30_preview,
  name: "2026-09-01-preview",
  acceptsCredentialCsr: true,
};
