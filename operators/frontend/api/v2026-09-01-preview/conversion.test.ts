/** 2026-09-01-preview's bodies round-trip through the internal model, all of which it sees. */
import { conversionProperties } from "../../../../test/support/api-version-properties.ts";

conversionProperties("2026-09-01-preview", { cluster: [], nodePool: [], externalAuth: [] });
