-- A turn's writes, smaller (issue 19: WAL per turn). A message's meta is written once and read
-- whole (the thread's history, the operator pages), never queried inside: stored as the JSON text
-- the application sent (json, as run_events.data and machine_events.event since 000013), not
-- parsed to jsonb with its per-element headers — and read back with its keys in the order written.
alter table messages alter column meta drop default;
alter table messages alter column meta type json using meta::json;
alter table messages alter column meta set default '{}'::json;
