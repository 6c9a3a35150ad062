-- The machine event log keyed by conversation first, and the conversation's own key stored once
-- (issue 19: WAL per turn). The clinic and evidence dialogues key their snapshot by the
-- conversation id itself, so every row of their logs, and its primary-key entry, repeated as a
-- 36-character text what the row's 16-byte conversation_id (uuid, 000023) already holds. Now
-- snapshot_key '' stands for "the conversation's own key" (storage/machine-events.ts `storedKey`);
-- other keys (the Workbench's interaction:…, clarification:…) are stored as they are.
--
-- The primary key becomes (conversation_id, snapshot_key, seq): a log is found by its
-- conversation and key, and erasing a conversation (on delete cascade) finds its rows by the same index.
-- It is dropped before the rows change: two conversations' logs both become '' with the same seqs.
alter table machine_events drop constraint machine_events_pkey;
drop index machine_events_labels;

update machine_events set snapshot_key = '' where snapshot_key = conversation_id::text;

alter table machine_events add constraint machine_events_pkey primary key (conversation_id, snapshot_key, seq);
-- One spelling per log: a writer that stored the conversation's own key in full would start a
-- second log beside the '' one (its seq from 1 again) that no reader finds; it fails here instead.
alter table machine_events add constraint machine_events_key_once check (snapshot_key <> conversation_id::text);
comment on column machine_events.snapshot_key is
  'the machine snapshot''s key; '''' = the conversation''s own key (machine_snapshots.key = conversation_id::text)';

-- Where the label in force is found (000015), by the same columns as the key.
create index machine_events_labels on machine_events (conversation_id, snapshot_key, seq) where machine <> '';
