-- A stored run event row may hold several consecutive events: ids first_seq .. seq, with `data` the
-- array of [event, data] pairs in order and `event` = 'batch'. Each flush (and the turn's commit)
-- writes one such row per run instead of one row per streamed token: the WAL of a turn shrinks
-- while every id a client was sent stays addressable (Last-Event-ID resumes inside a batch).
-- The key stays (run_id, seq) with seq the row's LAST id: the background flush and the turn's
-- commit may both write a run's unstored events from the same first id (driver/run.ts); keyed by
-- the last id they never collide, so neither waits on the other's transaction (readers skip the
-- ids they already have). Rows with first_seq null are single events as before.
alter table run_events add column first_seq integer;
alter table run_events add constraint run_events_batch_range check (first_seq is null or first_seq < seq);
