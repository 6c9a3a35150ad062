-- A turn's writes, smaller (issue 19: WAL per turn). Every turn logs its machine events as ONE
-- row instead of one per event: ids first_seq .. seq, `event` the array of the events in order
-- (as run_events since 000012). The key stays (snapshot_key, seq) with seq the row's last id, so
-- the next turn's seq still continues from max(seq); rows with first_seq null hold one event as before.
alter table machine_events add column first_seq integer;
alter table machine_events add constraint machine_events_batch_range check (first_seq is null or first_seq < seq);

-- The logs are written once and read whole, never queried inside: stored as the JSON text the
-- application sent (json), not parsed to jsonb — about a fifth smaller for these many small
-- objects (jsonb's per-element headers), and a resumed stream gets each event's keys in the order it was sent.
alter table run_events alter column data type json using data::json;
alter table machine_events alter column event type json using event::json;

-- Redundant: runs_one_running_per_conversation (000009) is a partial index with the same
-- predicate, so a scan for running runs (crash recovery) uses it; one index entry less per run.
drop index if exists runs_running;

-- /v1/stats/outcomes counts finished runs only (status <> 'running'): a run enters this index
-- when it closes, not also when it starts.
drop index if exists runs_outcome_stats;
create index runs_outcome_stats on runs (tenant_id, kind, outcome) where status <> 'running';
