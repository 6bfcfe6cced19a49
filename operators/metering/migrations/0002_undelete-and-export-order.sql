-- Up Migration
-- Issue 35, second step.

-- A soft-deleted cluster can be undeleted under its cluster ID (hcpctl cluster undelete). Its
-- billing record's deleted_at then moves here and is cleared, so counting resumes from the
-- undelete; each deletion window is kept, and nothing is billed inside one.
CREATE TABLE cluster_undeletions (
  cluster_id    text        NOT NULL REFERENCES billing_records (cluster_id),
  deleted_at    timestamptz NOT NULL,
  undeleted_at  timestamptz NOT NULL,
  PRIMARY KEY (cluster_id, deleted_at),
  CHECK (undeleted_at >= deleted_at)
);

-- The exporter's queue in the metering API's key order within an hour (ARM resource ID as ARM
-- compares it, dimension): rows of one key (a cluster deleted and created again under its name
-- within the hour) are adjacent, so one event carries their sum. The exporter reads it with a
-- cursor, so rows it marked (dead in this index until vacuum) are not scanned again.
DROP INDEX usage_hours_unreported;
CREATE INDEX usage_hours_unreported ON usage_hours (hour_start, lower(resource_id), dimension, id)
  WHERE state = 'unreported';

-- Down Migration
DROP INDEX usage_hours_unreported;
CREATE INDEX usage_hours_unreported ON usage_hours (hour_start, id) WHERE state = 'unreported';
DROP TABLE cluster_undeletions;
