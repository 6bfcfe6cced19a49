/**
 * An external auth of the internal model ⇄ its ExternalAuth CR, and the checks
 * ARO HCP makes of one beyond its schema: an https issuer, a CA that is PEM, client components
 * unique, each client ID one of the audiences, a username prefix only with policy Prefix. A client
 * component is `{name, authClientNamespace}` in ARM and `componentName`/`componentNamespace` in the
 * CR (the CRD keys its client list by them, as HyperShift does).
 */
import { X509Certificate } from "node:crypto";
import {
  API_VERSION,
  ARM_ANNOTATIONS,
  CONSOLE_CLIENT,
  EXTERNAL_AUTH_KIND,
  type ExternalAuth,
  resourceState,
} from "../../api/v1alpha1/index.ts";
import {
  checkedProperties,
  INTERNAL_SCHEMAS,
  type ExternalAuthProperties,
  type InternalResource,
} from "../api/internal.ts";
import { project } from "../api/schema-walks.ts";
import { fieldErrors, type FieldError } from "../errors.ts";
import {
  armConditions,
  armOnly,
  compact,
  envelopeOf,
  metadataFor,
  parseJson,
  set,
  type ToCRContext,
} from "./common.ts";

/** Every writable property has a spec field; only read-only ones are computed. */
const MAPPED = ["provisioningState", "status", "condition", "issuer", "clients", "claim"];

type Issuer = NonNullable<ExternalAuthProperties["issuer"]>;
type Client = NonNullable<ExternalAuthProperties["clients"]>[number];
type Claim = NonNullable<ExternalAuthProperties["claim"]>;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Whether `text` is one or more PEM certificates and nothing else. */
function isPemBundle(text: string): boolean {
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0 || text.replace(PEM_BLOCK, "").trim() !== "") return false;
  try {
    for (const block of blocks) new X509Certificate(block);
    return true;
  } catch {
    return false;
  }
}

/** What is wrong with an issuer URL, if anything: https, no query, fragment or user info (HyperShift's CEL). */
function issuerUrlProblem(url: string): string | undefined {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed?.protocol !== "https:") return "must be https URL";
  const extras = [parsed.search, parsed.hash, parsed.username, parsed.password];
  return extras.some(Boolean) ? "must not have a query, fragment or user info" : undefined;
}

function issuerErrors(issuer: Issuer | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const url = issuer?.url ?? "";
  const problem = issuerUrlProblem(url);
  if (problem)
    errors.push({ target: "properties.issuer.url", message: `Invalid value: "${url}": ${problem}` });
  if (issuer?.ca !== undefined && !isPemBundle(issuer.ca))
    errors.push({
      target: "properties.issuer.ca",
      message: "Invalid value: not a valid PEM certificate bundle",
    });
  return errors;
}

/**
 * ARO HCP's rule for a client's type: the console signs users in with a client secret, so it is
 * Confidential; no other component may be, as only the console's secret has a place to live (an
 * empty Secret the customer fills in on the hosted cluster, operators/cluster/authentication.ts).
 */
function clientTypeProblem(
  name: string | undefined,
  namespace: string | undefined,
  type: string | undefined,
): string | undefined {
  const console = name === CONSOLE_CLIENT.name && namespace === CONSOLE_CLIENT.namespace;
  if (console && type !== "Confidential")
    return `must be Confidential when component name is ${CONSOLE_CLIENT.name} and component namespace is ${CONSOLE_CLIENT.namespace}`;
  if (!console && type === "Confidential")
    return "confidential client type is not allowed for this component";
  return undefined;
}

function clientErrors(clients: readonly Client[], audiences: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  clients.forEach((c, i) => {
    const key = `${c.component?.authClientNamespace ?? ""}/${c.component?.name ?? ""}`;
    if (seen.has(key))
      errors.push({
        target: `properties.clients[${i}].component`,
        message: `Duplicate value: component ${key} is already listed`,
      });
    seen.add(key);
    if (c.clientId !== undefined && !audiences.includes(c.clientId))
      errors.push({
        target: `properties.clients[${i}].clientId`,
        message: `Invalid value: "${c.clientId}": must match an audience in issuer audiences`,
      });
    const typeProblem = clientTypeProblem(c.component?.name, c.component?.authClientNamespace, c.type);
    if (typeProblem)
      errors.push({
        target: `properties.clients[${i}].type`,
        message: `Invalid value: "${c.type}": ${typeProblem}`,
      });
  });
  return errors;
}

function claimErrors(claim: Claim | undefined): FieldError[] {
  const username = claim?.mappings?.username;
  const prefixed = username?.prefixPolicy === "Prefix";
  if (prefixed && !username.prefix)
    return [
      {
        target: "properties.claim.mappings.username.prefix",
        message: 'Required value: prefix is required when prefixPolicy is "Prefix"',
      },
    ];
  if (!prefixed && username?.prefix !== undefined)
    return [
      {
        target: "properties.claim.mappings.username.prefix",
        message: 'Invalid value: may only be specified when prefixPolicy is "Prefix"',
      },
    ];
  return [];
}

/** ARO HCP's checks of an external auth beyond its schema (validate_externalauth.go's rules). */
export function externalAuthErrors(p: ExternalAuthProperties): FieldError[] {
  return [
    ...issuerErrors(p.issuer),
    ...clientErrors(p.clients ?? [], p.issuer?.audiences ?? []),
    ...claimErrors(p.claim),
  ];
}

function clientSpec(c: Client): NonNullable<ExternalAuth["spec"]["clients"]>[number] {
  return compact({
    componentName: c.component?.name ?? "",
    componentNamespace: c.component?.authClientNamespace ?? "",
    clientId: c.clientId ?? "",
    extraScopes: c.extraScopes,
    type: c.type ?? "Public",
  });
}

function claimSpec(claim: Claim | undefined): ExternalAuth["spec"]["claim"] {
  const { username, groups } = claim?.mappings ?? {};
  return compact({
    mappings: compact({
      username: compact({
        claim: username?.claim ?? "",
        prefix: username?.prefix,
        prefixPolicy: username?.prefixPolicy,
      }),
      groups: groups ? compact({ claim: groups.claim ?? "", prefix: groups.prefix }) : undefined,
    }),
    validationRules: claim?.validationRules?.map((r) => ({
      type: "RequiredClaim" as const,
      requiredClaim: {
        claim: r.requiredClaim?.claim ?? "",
        requiredValue: r.requiredClaim?.requiredValue ?? "",
      },
    })),
  });
}

export function externalAuthToCR(
  res: InternalResource<ExternalAuthProperties>,
  ctx: ToCRContext,
): ExternalAuth {
  const p = res.properties;
  const errors = externalAuthErrors(p);
  if (errors.length > 0) throw fieldErrors(errors);
  // Required fields were checked against the schema before: the `?? ""` never apply.
  const spec: ExternalAuth["spec"] = compact({
    clusterRef: { name: ctx.clusterName ?? "" },
    issuer: compact({ url: p.issuer?.url ?? "", audiences: p.issuer?.audiences ?? [], ca: p.issuer?.ca }),
    clients: p.clients?.map(clientSpec),
    claim: claimSpec(p.claim),
  });
  return {
    apiVersion: API_VERSION,
    kind: EXTERNAL_AUTH_KIND,
    metadata: metadataFor(res, ctx, armOnly(p, MAPPED)),
    spec,
  };
}

export function externalAuthFromCR(cr: ExternalAuth): InternalResource<ExternalAuthProperties> {
  const p = parseJson(cr.metadata.annotations?.[ARM_ANNOTATIONS.properties]);
  const { issuer, clients, claim } = cr.spec;
  set(p, "provisioningState", resourceState(cr).state);
  set(p, "issuer", compact({ url: issuer.url, audiences: issuer.audiences, ca: issuer.ca }));
  set(
    p,
    "clients",
    clients?.map((c) =>
      compact({
        component: { name: c.componentName, authClientNamespace: c.componentNamespace },
        clientId: c.clientId,
        extraScopes: c.extraScopes,
        type: c.type,
      }),
    ),
  );
  set(p, "claim", claim);
  set(p, "status.conditions", armConditions(cr));
  return {
    ...envelopeOf(cr, "externalAuth", undefined),
    properties: checkedProperties(project(INTERNAL_SCHEMAS.externalAuth, p) ?? {}),
  };
}
