/**
 * 2025-12-23-preview's bodies round-trip through the internal model. It cannot see a cluster's
 * ingress or FIPS: its updates keep them.
 */
import { conversionProperties } from "../../../../test/support/api-version-properties.ts";

conversionProperties("2025-12-23-preview", {
  cluster: ["cryptoRestrictions", "ingress"],
  nodePool: [],
  externalAuth: [],
});
