-- A stored run event row may hold several consecutive events: ids seq .. last_seq, with `data` the
-- array of [event, data] pairs in order and `event` = 'batch'. Each flush (and the turn's commit)
-- writes one such row per run instead of one row per streamed token: the WAL of a turn shrinks
-- while every id a client was sent stays addressable (Last-Event-ID resumes inside a batch).
-- Rows with last_seq null are single events as before.
alter table run_events add column last_seq integer;
alter table run_events add constraint run_events_batch_range check (last_seq is null or last_seq > seq);
