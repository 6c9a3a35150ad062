-- A clarification answer and its continuation are one turn (issue 18 item 3): nothing of the
-- answer is written until the continuation commits with it. Meanwhile the open clarification is
-- claimed, so a concurrent answer is refused with 409 before any model call. A claim lapses when
-- the run holding it is no longer running (failed, or its heartbeat stale after a crash), or,
-- before its run started, after a short grace: the same answer can then be sent again.
alter table clarifications add column claim_token text;
alter table clarifications add column claim_run_id text;
alter table clarifications add column claimed_at timestamptz;
