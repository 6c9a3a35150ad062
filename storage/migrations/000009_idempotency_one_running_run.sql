-- Safe clients (issue 16, issue 18 item 6).
--
-- 1. At most one running run per conversation: the "reject" policy for concurrent messages is
--    decided by this index when the run row goes in, before any model call, across processes.
--    Older duplicates (possible before this index) are closed first so the index can be built.
update runs set status = 'failed', error_code = 'internal', outcome = 'abandoned', reason_codes = '{internal}', finished_at = now()
where status = 'running'
  and id not in (select distinct on (conversation_id) id from runs where status = 'running' order by conversation_id, created_at desc);
create unique index runs_one_running_per_conversation on runs (conversation_id) where status = 'running';

-- 2. Idempotency-Key of a POST that starts a run: the key names the run it started, so a retry
--    replays that run instead of starting a second turn. request_hash tells a retry (same body)
--    from a reused key (another body). No foreign key to runs: the key and its run go in in one
--    statement (storage/runs.ts startRun); both go with their conversation.
create table idempotency_keys (
  tenant_id       text not null,
  key             text not null,
  request_hash    text not null,
  run_id          text not null,
  conversation_id text not null references conversations (id) on delete cascade,
  created_at      timestamptz not null default now(),
  primary key (tenant_id, key)
);
create index idempotency_keys_run on idempotency_keys (run_id);
