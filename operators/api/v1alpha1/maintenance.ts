/**
 * Maintenance vocabulary (hcp.aro.dev/v1alpha1): a cluster's windows and freezes
 * (HcpCluster spec.maintenance), MaintenanceTask (a task over a set of clusters) and MaintenanceRun
 * (one task on one cluster). Mirrors crds/hcp.aro.dev_maintenancetasks.yaml and
 * crds/hcp.aro.dev_maintenanceruns.yaml.
 */
export const WEEKDAYS = [
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
  "Sunday",
] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A weekly window in the cluster's time zone; an end at or before the start runs past midnight. */
export interface MaintenanceWindow {
  days: Weekday[];
  /** "HH:MM", wall-clock time in spec.maintenance.timeZone. */
  start: string;
  end: string;
}

/** A period in which nothing disruptive begins, even inside a window (an SRE's urgent work aside). */
export interface MaintenanceFreeze {
  /** RFC 3339. */
  start: string;
  end: string;
  reason?: string;
}

export interface MaintenanceSpec {
  /** IANA time zone of the windows; defaults to UTC. */
  timeZone?: string;
  /** None: any time. */
  windows?: MaintenanceWindow[];
  freezes?: MaintenanceFreeze[];
}
