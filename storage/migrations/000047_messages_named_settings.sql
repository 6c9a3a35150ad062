-- The last message of a thread that names the clinic's settings versions, found without a walk.
--
-- A clinic turn's read asks for it (systems/clinic/store/turn-context.ts `named_settings`; the
-- operator pages' meta expansion asks the same, systems/clinic/message-meta.ts). Only the first
-- reply and a reply after a settings change name them, so the read walked back over every message
-- of the thread and parsed each meta's JSON text: measured ≈ 0.35 ms of PostgreSQL time per turn
-- at 400 messages, growing with the thread. Only the messages that name settings have an entry
-- here, so an ordinary turn adds none (no WAL), and the read is one index probe.
create index if not exists messages_named_settings on messages (conversation_id, seq)
  where (meta ->> 'settings') is not null;
