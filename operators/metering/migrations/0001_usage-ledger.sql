-- Up Migration
-- The usage ledger (issue 35, decision 0013). Times are timestamptz (UTC instants); quantities are
-- numeric, never float. Every key below is what makes a repeated write a no-op.

-- One row per cluster, keyed by the cluster's ID (the HcpCluster's original uid), which survives
-- restarts and region restores; its ARM resource ID does not identify it (a cluster deleted and
-- created again under the same name is another cluster). Each fact is written once.
CREATE TABLE billing_records (
  cluster_id          text PRIMARY KEY,
  resource_id         text        NOT NULL,
  subscription_id     text        NOT NULL,
  tenant_id           text,
  location            text        NOT NULL,
  created_at          timestamptz NOT NULL,
  first_succeeded_at  timestamptz,
  deleted_at          timestamptz,
  CHECK (first_succeeded_at IS NULL OR first_succeeded_at >= created_at),
  CHECK (deleted_at IS NULL OR deleted_at >= created_at)
);
-- hcpctl usage by subscription.
CREATE INDEX billing_records_by_subscription ON billing_records (subscription_id, created_at);

-- What the controllers observed: per metered resource (the cluster for control-plane hours, each
-- node pool for vCPU-hours) and dimension, intervals [started_at, ended_at) at a constant rate.
-- At most one open interval per resource and dimension (the partial unique index), so two writers
-- cannot both open one.
CREATE TABLE usage_segments (
  id            bigserial PRIMARY KEY,
  resource_uid  text        NOT NULL,
  dimension     text        NOT NULL CHECK (dimension IN ('controlPlaneHours', 'vCPUHours')),
  cluster_id    text        NOT NULL REFERENCES billing_records (cluster_id),
  resource_id   text        NOT NULL,
  rate          numeric     NOT NULL CHECK (rate > 0),
  started_at    timestamptz NOT NULL,
  ended_at      timestamptz,
  CHECK (ended_at IS NULL OR ended_at > started_at)
);
CREATE UNIQUE INDEX usage_segments_one_open ON usage_segments (resource_uid, dimension) WHERE ended_at IS NULL;
-- The latest segment of a resource (observe), and the segments a roll-up window overlaps.
CREATE UNIQUE INDEX usage_segments_by_resource ON usage_segments (resource_uid, dimension, started_at);
CREATE INDEX usage_segments_by_end ON usage_segments (ended_at);
-- A cluster's open segments, closed together when it is deleted.
CREATE INDEX usage_segments_open_by_cluster ON usage_segments (cluster_id) WHERE ended_at IS NULL;

-- Hourly usage, derived from the segments for complete hours only, written with ON CONFLICT DO
-- NOTHING: the unique key (resource, dimension, hour) is why a roll-up run twice, after a crash or
-- by two leaders, writes each hour once. It is also the metering API's duplicate key.
CREATE TABLE usage_hours (
  id               bigserial PRIMARY KEY,
  resource_uid     text        NOT NULL,
  dimension        text        NOT NULL CHECK (dimension IN ('controlPlaneHours', 'vCPUHours')),
  hour_start       timestamptz NOT NULL CHECK (extract(epoch FROM hour_start)::numeric % 3600 = 0),
  quantity         numeric(20, 6) NOT NULL CHECK (quantity > 0),
  cluster_id       text        NOT NULL REFERENCES billing_records (cluster_id),
  subscription_id  text        NOT NULL,
  resource_id      text        NOT NULL,
  recorded_at      timestamptz NOT NULL DEFAULT now(),
  state            text        NOT NULL DEFAULT 'unreported'
                     CHECK (state IN ('unreported', 'reported', 'rejected', 'expired')),
  reported_at      timestamptz,
  usage_event_id   text,
  reason           text,
  CONSTRAINT usage_hours_once UNIQUE (resource_uid, dimension, hour_start),
  CHECK ((state = 'reported') = (reported_at IS NOT NULL)),
  CHECK (state NOT IN ('rejected', 'expired') OR reason IS NOT NULL)
);
-- The exporter's queue: unreported rows oldest first; small, since reported rows leave it.
CREATE INDEX usage_hours_unreported ON usage_hours (hour_start, id) WHERE state = 'unreported';
-- hcpctl usage by subscription or by cluster over a period.
CREATE INDEX usage_hours_by_subscription ON usage_hours (subscription_id, hour_start);
CREATE INDEX usage_hours_by_cluster ON usage_hours (cluster_id, hour_start);
CREATE INDEX usage_hours_by_hour ON usage_hours (hour_start);

-- How far the roll-up has gone: every hour before rolled_up_to is written for every segment that
-- existed when it ran; last_segment_id finds segments recorded late (starting before it).
CREATE TABLE rollup_state (
  id               boolean PRIMARY KEY DEFAULT true CHECK (id),
  rolled_up_to     timestamptz,
  last_segment_id  bigint NOT NULL DEFAULT 0
);
INSERT INTO rollup_state DEFAULT VALUES;

-- Down Migration
DROP TABLE rollup_state;
DROP TABLE usage_hours;
DROP TABLE usage_segments;
DROP TABLE billing_records;
