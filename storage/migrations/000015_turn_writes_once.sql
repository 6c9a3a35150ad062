-- A turn's writes, smaller again (issue 19: WAL per turn).
--
-- 1. The snapshot is written whole on every turn and read whole (restored in the application),
--    never queried inside: stored as the JSON text the application sent (json), not parsed to
--    jsonb — about a fifth smaller for its many small objects, as the logs since 000013.
alter table machine_snapshots alter column snapshot type json using snapshot::json;

-- 2. machine_events.machine names the definition that took a row's events, and a clinic label
--    carries every settings version (~150 bytes) — the same on every turn until the settings
--    change. A row now stores '' for "the same as the closest earlier row with a label" (null
--    still means "not recorded": rows older than 000005's column); existing rows keep theirs.
comment on column machine_events.machine is
  '"<machine id>@<version>[|<settings versions>]"; '''' = the label of the closest earlier row of the key whose label is neither null nor ''''';
-- Where the label in force is found (the writer and a reader from the middle of a log): only rows
-- that store one are in it, so a turn that repeats the label adds no entry here.
create index machine_events_labels on machine_events (snapshot_key, seq) where machine <> '';
