/**
 * A customer-managed etcd key: its vault (found by name in the cluster's subscription), the key and
 * the version exist and are enabled, and the KMS identity may use them: Key Vault Crypto User on a
 * vault that authorizes by Azure RBAC (a role need, role-assignments.ts), or an access policy that
 * lets it encrypt and decrypt.
 */
import type { ClusterProperties } from "../api/internal.ts";
import { shorten } from "../api/json.ts";
import type { FieldError } from "../errors.ts";
import { call, collect, NOT_FOUND, sameName, type Run } from "./azure-calls.ts";
import { OPERATORS } from "./identities.ts";

const KMS = "properties.etcd.dataEncryption.customerManaged.kms";
/** What the KMS plugin does with the key, when a vault authorizes by access policies. */
const KMS_KEY_PERMISSIONS = ["encrypt", "decrypt"];

export interface KmsKey {
  vaultName: string;
  key: string;
  version: string;
}

/** The customer-managed key of the internal properties, when etcd is to be encrypted with one. */
export function kmsOf(properties: ClusterProperties): KmsKey | undefined {
  const encryption = properties.etcd?.dataEncryption;
  if (encryption?.keyManagementMode !== "CustomerManaged") return undefined;
  const kms = encryption.customerManaged?.kms;
  if (!kms || !("vaultName" in kms)) return undefined;
  const { vaultName } = kms;
  const { name: key, version } = kms.activeKey ?? {};
  return vaultName && key && version ? { vaultName, key, version } : undefined;
}

/** A key or version as read: whether it exists and is enabled. */
export type KeyState = "missing" | "disabled" | "enabled";

function stateOf(x: typeof NOT_FOUND | { attributes?: { enabled?: boolean } }): KeyState {
  if (x === NOT_FOUND) return "missing";
  return x.attributes?.enabled === false ? "disabled" : "enabled";
}

/** The field error for a customer-managed key or version that is missing or disabled. */
export function keyErrors(kms: KmsKey, key: KeyState, version: KeyState): FieldError[] {
  const where = `in key vault '${kms.vaultName}'`;
  const keyName = shorten(kms.key, 64);
  const versionName = shorten(kms.version, 64);
  if (key === "missing")
    return [{ target: `${KMS}.activeKey.name`, message: `The key '${keyName}' does not exist ${where}` }];
  if (key === "disabled")
    return [{ target: `${KMS}.activeKey.name`, message: `The key '${keyName}' ${where} is disabled` }];
  if (version === "missing")
    return [
      {
        target: `${KMS}.activeKey.version`,
        message: `The key '${keyName}' ${where} has no version '${versionName}'`,
      },
    ];
  if (version === "disabled")
    return [
      {
        target: `${KMS}.activeKey.version`,
        message: `Version '${versionName}' of the key '${keyName}' ${where} is disabled`,
      },
    ];
  return [];
}

/** How a vault authorizes: by Azure RBAC, or by its access policies. */
export type VaultAccess = {
  name?: string;
  properties?: {
    enableRbacAuthorization?: boolean;
    accessPolicies?: Array<{ objectId?: string; permissions?: { keys?: string[] } }>;
  };
};

/**
 * The KMS operator's identity must be named. A vault that authorizes by Azure RBAC is a scope of
 * its role (roleNeeds); one of access policies must have a policy letting its principal encrypt
 * and decrypt with keys.
 */
export function kmsIdentityErrors(
  properties: ClusterProperties,
  vault: VaultAccess,
  principalOf: (identity: string) => string | undefined,
): FieldError[] {
  const id =
    properties.platform?.operatorsAuthentication?.userAssignedIdentities?.controlPlaneOperators?.["kms"];
  const target = `${OPERATORS}.controlPlaneOperators.kms`;
  if (!id)
    return [
      {
        target,
        message:
          "A cluster whose etcd is encrypted with a customer-managed key needs the 'kms' operator's identity",
      },
    ];
  const principal = principalOf(id);
  if (vault.properties?.enableRbacAuthorization !== false || principal === undefined) return [];
  const allowed = (vault.properties.accessPolicies ?? []).some(
    (p) =>
      sameName(p.objectId, principal) &&
      KMS_KEY_PERMISSIONS.every((want) =>
        (p.permissions?.keys ?? []).some((k) => sameName(k, want) || sameName(k, "all")),
      ),
  );
  if (allowed) return [];
  return [
    {
      target,
      message: `The key vault '${vault.name ?? ""}' has no access policy letting the identity '${shorten(id, 256)}' (principal ${principal}) ${KMS_KEY_PERMISSIONS.join(" and ")} with its keys`,
    },
  ];
}

/** A vault of the subscription by name (names are unique across Azure), with its resource group. */
async function readVault(
  run: Run,
  subscriptionId: string,
  name: string,
): Promise<(VaultAccess & { id: string; resourceGroup: string }) | undefined> {
  const client = run.clients.keyVault(subscriptionId);
  const vaults = await call(run, "list Microsoft.KeyVault/vaults", () =>
    collect(client.vaults.listBySubscription({ abortSignal: run.signal })),
  );
  const vault = vaults === NOT_FOUND ? undefined : vaults.find((v) => sameName(v.name, name));
  const resourceGroup = vault?.id ? /\/resourceGroups\/([^/]+)\//i.exec(vault.id)?.[1] : undefined;
  return vault?.id && resourceGroup ? { ...vault, id: vault.id, resourceGroup } : undefined;
}

/** The vault found (the KMS identity's scope) and the field errors about the key. */
export interface KmsRead {
  vault?: VaultAccess & { id: string };
  errors: FieldError[];
}

/**
 * A customer-managed etcd key: its vault, the key and the version, enabled. Whether the KMS
 * identity may use them is checked with the other identities' roles (kmsIdentityErrors).
 */
export async function readKms(
  run: Run,
  c: { subscriptionId: string; properties: ClusterProperties },
  checkKey: boolean,
): Promise<KmsRead> {
  const kms = kmsOf(c.properties);
  if (!kms) return { errors: [] };
  const vault = await readVault(run, c.subscriptionId, kms.vaultName);
  // An unchanged key is not judged again; its vault is still the KMS identity's scope.
  if (!checkKey) return vault ? { vault, errors: [] } : { errors: [] };
  if (!vault)
    return {
      errors: [
        {
          target: `${KMS}.vaultName`,
          message: `The key vault '${shorten(kms.vaultName, 64)}' does not exist in subscription '${c.subscriptionId}'`,
        },
      ],
    };
  const client = run.clients.keyVault(c.subscriptionId);
  const [key, version] = await Promise.all([
    call(run, "read Microsoft.KeyVault/vaults/keys", () =>
      client.keys.get(vault.resourceGroup, kms.vaultName, kms.key, { abortSignal: run.signal }),
    ),
    call(run, "read Microsoft.KeyVault/vaults/keys/versions", () =>
      client.keys.getVersion(vault.resourceGroup, kms.vaultName, kms.key, kms.version, {
        abortSignal: run.signal,
      }),
    ),
  ]);
  return { vault, errors: keyErrors(kms, stateOf(key), stateOf(version)) };
}
