-- The operators' inbox (issue 17 item 1): who handles a conversation, whether it waits for a
-- human and why, the patient's contact, and the escalation webhook's outbox and dead letters.

-- status: open (the bot answers), taken (an operator has it: the bot only holds), closed.
alter table conversations add column status text not null default 'open' check (status in ('open', 'taken', 'closed'));
alter table conversations add column taken_by text;
alter table conversations add column taken_at timestamptz;
-- Waiting for a human now (set by an escalation, cleared by release or close); escalated_at keeps the last one.
alter table conversations add column escalated boolean not null default false;
alter table conversations add column escalated_at timestamptz;
alter table conversations add column escalation_reason text;
-- The phone the patient left when asked after an escalation.
alter table conversations add column contact_phone text;
-- The inbox orders by activity: kept by a trigger on messages so every system's turns count.
alter table conversations add column last_activity_at timestamptz not null default now();
update conversations c set last_activity_at = coalesce((select max(m.created_at) from messages m where m.conversation_id = c.id), c.created_at);
create index conversations_inbox on conversations (tenant_id, escalated, last_activity_at desc, id desc);

-- One update per insert statement (a turn appends its messages in one), not one per row.
create function conversations_touch() returns trigger language plpgsql as $$
begin
  update conversations c set last_activity_at = greatest(c.last_activity_at, i.at)
  from (select conversation_id, max(created_at) as at from inserted group by conversation_id) i
  where c.id = i.conversation_id;
  return null;
end $$;
create trigger messages_touch_conversation after insert on messages referencing new table as inserted
  for each statement execute function conversations_touch();

-- Webhook deliveries, written in the transaction of the turn that caused them and sent after
-- its commit; a row that failed every attempt moves to webhook_dead_letters.
create table outbox (
  id              bigserial primary key,
  tenant_id       text not null,
  conversation_id text not null references conversations (id) on delete cascade,
  event           text not null,
  payload         jsonb not null,
  status          text not null default 'pending' check (status in ('pending', 'delivered', 'dead')),
  attempts        integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error      text,
  created_at      timestamptz not null default now(),
  delivered_at    timestamptz
);
create index outbox_due on outbox (next_attempt_at) where status = 'pending';

create table webhook_dead_letters (
  id              bigserial primary key,
  outbox_id       bigint not null references outbox (id) on delete cascade,
  tenant_id       text not null,
  conversation_id text not null references conversations (id) on delete cascade,
  event           text not null,
  payload         jsonb not null,
  attempts        integer not null,
  last_error      text,
  created_at      timestamptz not null default now()
);
