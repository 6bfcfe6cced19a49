/**
 * The image's one entry point: `hcp-operators <component> [flags]` runs one component of the
 * region with the flags of its own main (docs/configuration.md lists them all).
 *
 *   operators       the service cluster's controllers and maestro-server (operators/main.ts)
 *   frontend        the ARM frontend (operators/frontend/main.ts)
 *   maestro-agent   one management cluster's agent (operators/maestro-agent/main.ts)
 *   portal          the SRE portal (operators/portal/main.ts)
 *   gate            the session gate, on every replica (operators/sessiongate/main.ts)
 *
 * Each main parses process.argv when it is imported, so the subcommand is taken out of argv first
 * and only the chosen main is loaded (a component never loads another's dependencies).
 */
export const COMPONENTS = {
  operators: () => import("./main.ts"),
  frontend: () => import("./frontend/main.ts"),
  "maestro-agent": () => import("./maestro-agent/main.ts"),
  portal: () => import("./portal/main.ts"),
  gate: () => import("./sessiongate/main.ts"),
} as const;

export type Component = keyof typeof COMPONENTS;

const USAGE = `usage: hcp-operators <${Object.keys(COMPONENTS).join("|")}> [flags]\n`;

export function isComponent(name: string | undefined): name is Component {
  return name !== undefined && Object.hasOwn(COMPONENTS, name);
}

async function run(): Promise<void> {
  const name = process.argv[2];
  if (name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(USAGE);
    return;
  }
  if (!isComponent(name)) {
    process.stderr.write(
      `hcp-operators: ${name === undefined ? "no component given" : `unknown component "${name}"`}\n${USAGE}`,
    );
    process.exit(2);
  }
  process.argv.splice(2, 1);
  await COMPONENTS[name]();
}

// Imported by a test for COMPONENTS, it runs nothing.
if (import.meta.main) await run();
