// The layers of operators/, read by eslint.config.js (which turns them into import rules) and by
// test/lint/layers.test.ts. Plain JavaScript: the lint config loads it before any TypeScript.
import { readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * The layer of every folder under operators/. The list is checked against the tree when the
 * config loads: a new folder without a layer fails lint until it is given one here.
 *   api: the types and shared vocabulary; imports nothing outside itself.
 *   library: what controllers are built from (the runtime, the protocol, Azure, releases, the
 *     hosted-cluster helpers of hcp/); imports no controller and no CLI.
 *   controller: one reconciler (or the frontend) each; reaches the broker through cloudevents/
 *     client/, codec/, store/ and types.ts, never the transport.
 *   cli: hcpctl; reads the service cluster only, so it never reaches cloudevents/ at all, and
 *     imports only the folders CLI_IMPORTS names besides its own.
 */
export const LAYERS = {
  api: "api",
  azure: "library",
  cloudevents: "library",
  hcp: "library",
  metering: "library",
  regionbackup: "library",
  releases: "library",
  runtime: "library",
  accesssession: "controller",
  breakglass: "controller",
  cluster: "controller",
  externalauth: "controller",
  maintenance: "controller",
  frontend: "controller",
  "maestro-agent": "controller",
  "maestro-server": "controller",
  managementcluster: "controller",
  monitor: "controller",
  nodepool: "controller",
  orphansweep: "controller",
  softdelete: "controller",
  usage: "controller",
  releasegraph: "controller",
  rollout: "controller",
  portal: "controller",
  sessiongate: "controller",
  hcpctl: "cli",
};

/**
 * What the cli may import besides its own files: the types and vocabulary (api), the client and
 * kubeconfig handling (runtime), and releases, a pure library (the catalog and the update-graph
 * planner `hcpctl upgrade plan` runs, the same the controllers and the frontend run), and
 * regionbackup, the library `hcpctl region backup|restore` shares with the operators, and
 * metering, the usage ledger's read-only queries `hcpctl usage` runs against its PostgreSQL. No
 * controller: what hcpctl reads of one is named in api/.
 */
export const CLI_IMPORTS = ["api", "runtime", "releases", "regionbackup", "metering"];

/** Each folder with its layer; throws naming every folder the table does not know. */
export function layersOf(folders, table = LAYERS) {
  const missing = folders.filter((f) => !Object.hasOwn(table, f));
  if (missing.length > 0)
    throw new Error(
      `operators/${missing.join(", operators/")}: no layer; give each folder one in LAYERS (hack/lint/layers.js)`,
    );
  return folders.map((folder) => [folder, table[folder]]);
}

/** The folders directly under `<root>/operators`. */
export function operatorFolders(root) {
  return readdirSync(join(root, "operators"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}
