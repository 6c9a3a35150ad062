-- Webhooks as durable as the conversation (issue 47 item 2).
-- seq: the delivery's number within its conversation (1, 2, 3 …), in the body of every event, so a
-- receiver puts one conversation's events in order and sees a gap; the dispatcher sends one
-- conversation's rows one at a time in this order. retry_from: where the retry horizon counts
-- from (the row's creation, or its re-delivery from the dead letters).
alter table outbox add column seq bigint;
alter table outbox add column retry_from timestamptz not null default now();
update outbox o set seq = n.rn, retry_from = o.created_at
  from (select id, row_number() over (partition by conversation_id order by id) as rn from outbox) n
  where n.id = o.id;
alter table outbox alter column seq set not null;
create unique index outbox_conversation_seq on outbox (conversation_id, seq);
-- The head of each conversation's queue is found by this index (claimDue).
create index outbox_pending_by_conversation on outbox (conversation_id, seq) where status = 'pending';

-- The last seq handed out per conversation: its row lock orders two transactions that enqueue
-- for one conversation at once (a patient's turn and an operator's message).
create table outbox_seq (
  conversation_id uuid primary key references conversations (id) on delete cascade,
  last_seq        bigint not null
);
insert into outbox_seq (conversation_id, last_seq)
  select conversation_id::uuid, max(seq) from outbox group by conversation_id;
