-- Internal notes (issue 43 item 4): what operators tell each other about a thread. A table of its
-- own, not `messages` and not `thread_events`: the transcript, the prompts and the patient's
-- event stream read only those, so a note can reach none of them. Erased with the conversation.
create table thread_notes (
  id              uuid primary key default gen_random_uuid(),
  conversation_id uuid not null references conversations (id) on delete cascade,
  author          text not null,
  text            text not null,
  created_at      timestamptz not null default now()
);
create index thread_notes_conversation on thread_notes (conversation_id, created_at);
