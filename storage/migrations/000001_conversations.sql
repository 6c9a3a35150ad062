-- Foundation schema: tenants' conversations, their messages, machine snapshots, runs and run events.

create table conversations (
  id          text primary key,
  tenant_id   text not null,
  kind        text not null check (kind in ('workbench', 'clinic', 'evidence', 'test')),
  created_at  timestamptz not null default now()
);
create index conversations_tenant on conversations (tenant_id, created_at desc);

create table messages (
  id              bigserial primary key,
  conversation_id text not null references conversations (id) on delete cascade,
  seq             integer not null,
  role            text not null check (role in ('user', 'assistant', 'system', 'tool')),
  text            text not null,
  meta            jsonb not null default '{}'::jsonb,
  run_id          text,
  created_at      timestamptz not null default now(),
  unique (conversation_id, seq)
);

-- Control state only: one row per (owner, machine). row_version is the optimistic lock.
create table machine_snapshots (
  key             text primary key,
  conversation_id text not null references conversations (id) on delete cascade,
  machine_id      text not null,
  machine_version integer not null,
  row_version     integer not null,
  snapshot        jsonb not null,
  updated_at      timestamptz not null default now()
);
create index machine_snapshots_conversation on machine_snapshots (conversation_id);

create table runs (
  id              text primary key,
  conversation_id text not null references conversations (id) on delete cascade,
  tenant_id       text not null,
  kind            text not null,
  status          text not null check (status in ('running', 'completed', 'failed')),
  outcome         text,
  reason_codes    text[] not null default '{}',
  error_code      text,
  owner           text not null,
  heartbeat_at    timestamptz not null default now(),
  -- Last time a follower (GET /v1/runs/{id}/events) read this run: keeps a detached run alive.
  followed_at     timestamptz,
  created_at      timestamptz not null default now(),
  finished_at     timestamptz
);
create index runs_conversation on runs (conversation_id, created_at);
create index runs_running on runs (status) where status = 'running';

create table run_events (
  run_id     text not null references runs (id) on delete cascade,
  seq        integer not null,
  event      text not null,
  data       jsonb not null,
  created_at timestamptz not null default now(),
  primary key (run_id, seq)
);
