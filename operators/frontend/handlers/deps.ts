/** What the resource handlers work with. */
import type { KubeClient } from "../../runtime/kube.ts";
import type { Logger } from "../../runtime/logger.ts";
import type { AzureChecks } from "../checks/azure-checks.ts";
import type { CatalogReader } from "../versions/openshift-versions.ts";
import type { OperationDeadlines } from "../operations/deadlines.ts";
import type { OperationStore } from "../operations/store.ts";

export interface ResourceDeps {
  client: KubeClient;
  operations: OperationStore;
  catalog: CatalogReader;
  /** The clock ends of life are judged by (default Date.now). */
  now?: () => number;
  /** Items per LIST page. */
  pageSize: number;
  /** How long each class of operation may run (operations/deadlines.ts). */
  deadlines: OperationDeadlines;
  /** Hosts an Azure-AsyncNotificationUri may name (operations/notifier.ts). */
  notificationHosts: string[];
  log: Logger;
  /** The customer's Azure resources a create relies on, checked before it is written (azure-checks.ts). */
  azure?: AzureChecks;
}
