-- Reminders (issue 43 item 4): an escalation not taken within N minutes, a held thread where
-- nobody wrote for M minutes. The deadline is in the data (escalated_at; taken_at and
-- last_activity_at), so a periodic sweep of any process finds what is due after a restart too;
-- this table records each reminder raised, once per wait (`since` is where the wait began), so
-- two processes sweeping at once raise it once and its webhook row is written once.
create table inbox_reminders (
  conversation_id uuid not null references conversations (id) on delete cascade,
  kind            text not null check (kind in ('untaken', 'silent')),
  since           timestamptz not null,
  operator        text,
  requeued        boolean not null default false,
  raised_at       timestamptz not null default now(),
  primary key (conversation_id, kind, since)
);
-- The sweep's two questions, over the few rows that can answer them. Neither index holds
-- last_activity_at, so a turn's touch of it stays a HOT update (migration 000016).
create index conversations_escalation_wait on conversations (escalated_at) where escalated and status <> 'taken';
create index conversations_held on conversations (taken_at) where status = 'taken';
