-- A conversation belongs to whoever started it (issue 47 item 6): creating a conversation issues a
-- conversation-scoped credential, and a `chat` token reads, follows and writes the conversation
-- only with it (storage/conversation-credentials.ts). Only its SHA-256 is stored (hex): a copy of
-- the database hands out no credential. Null: a conversation created before this migration — no
-- credential reaches it until an admin issues one (POST /v1/conversations/{id}/credential), or,
-- while CONVERSATION_LEGACY_ACCESS is on, any `chat` token of its tenant does, as before.
-- The column sits on the row every conversation lookup already reads: checking it costs no
-- statement of its own.
alter table conversations add column credential_sha256 text;
