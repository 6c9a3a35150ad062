-- A turn's writes, smaller (issue 19: WAL per turn). An assistant message's meta named the
-- settings versions that answered it (`settings`, ≈ 120 bytes) on every turn, although they
-- change only when an operator edits the settings. Now a message names them only when they
-- differ from the thread's previous named ones (systems/clinic/message-meta.ts); the thread's
-- views show every message with its versions. This index finds a thread's last named versions
-- (a turn reads them with its context) and the ones before a page of messages — it holds only
-- the messages that name them, so it is written only when the settings change.
create index messages_settings on messages (conversation_id, seq) where (meta ->> 'settings') is not null;
