-- Human takeover (issue 32). An operator's message is a message of the conversation with its
-- author (role `operator`), and what happens to a thread outside a patient's turn — taken,
-- an operator's message, released, closed, a patient's message while a human holds it — is
-- appended to the thread's event log, which the thread's event stream
-- (GET /v1/clinic/threads/{id}/events) replays after a Last-Event-ID and follows live. Each
-- operator request's Idempotency-Key is kept with the event it wrote, so a repeated request
-- answers with that event instead of writing a second one.
alter table messages drop constraint if exists messages_role_check;
alter table messages add constraint messages_role_check
  check (role in ('user', 'assistant', 'system', 'tool', 'operator'));

create table thread_events (
  conversation_id uuid not null references conversations (id) on delete cascade,
  seq             integer not null,
  kind            text not null,
  data            jsonb not null default '{}',
  idempotency_key text,
  created_at      timestamptz not null default now(),
  primary key (conversation_id, seq)
);
create unique index thread_events_idempotency on thread_events (conversation_id, idempotency_key)
  where idempotency_key is not null;
-- /v1/stats/outcomes reads the operators' actions of a period by kind.
create index thread_events_kind_time on thread_events (kind, created_at);
