-- Workbench Interactions and their clarification chain (seed 000). Append-only: the foundation
-- tables of 000001 are untouched. These rows are the queryable projection; the control state
-- itself is the machine snapshot (machine_snapshots, keys interaction:{id} / clarification:{id}),
-- written in the same transaction.

create table interactions (
  id                         text primary key,
  conversation_id            text not null references conversations (id) on delete cascade,
  root_message_id            bigint references messages (id),
  status                     text not null check (status in ('preparing', 'awaiting_clarification', 'answering', 'completed', 'superseded', 'cancelled', 'failed')),
  plan_json                  jsonb,
  plan_version               integer not null default 1 check (plan_version > 0),
  workspace_generation       text,
  workspace_snapshot_sha256  text,
  documentation_version      text,
  created_at                 timestamptz not null default now(),
  updated_at                 timestamptz not null default now()
);
create index interactions_conversation on interactions (conversation_id, created_at);
-- At most one active Interaction per conversation (seed 000, first version).
create unique index interactions_one_active on interactions (conversation_id)
  where status in ('preparing', 'awaiting_clarification', 'answering');

create table clarifications (
  id                       text primary key,
  interaction_id           text not null references interactions (id) on delete cascade,
  task_id                  text not null,
  slot                     text not null,
  question                 text not null,
  question_message_id      bigint references messages (id),
  answer_message_id        bigint references messages (id),
  -- The closed list an answer may pick from; selectedCandidateId is checked against it.
  candidate_snapshot_json  jsonb not null default '[]'::jsonb,
  status                   text not null check (status in ('open', 'answered', 'unclear', 'cancelled', 'superseded')),
  plan_version             integer not null,
  created_at               timestamptz not null default now(),
  resolved_at              timestamptz
);
create index clarifications_interaction on clarifications (interaction_id, created_at);
-- One open question per Interaction.
create unique index clarifications_one_open on clarifications (interaction_id) where status = 'open';

-- The events each Workbench machine was given, in order, written in the same transaction as its
-- snapshot: replaying them through the pure machine reproduces the stored snapshot.
create table workbench_machine_events (
  snapshot_key    text not null,
  seq             integer not null,
  conversation_id text not null references conversations (id) on delete cascade,
  event           jsonb not null,
  run_id          text,
  created_at      timestamptz not null default now(),
  primary key (snapshot_key, seq)
);
