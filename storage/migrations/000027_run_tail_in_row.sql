-- A run's last stored events (issue 19: WAL per turn). The events a run has not stored yet when it
-- ends — for a turn, usually all of them: run_started, the tokens, final, done — are written into
-- the run's own row by the update that closes it, not as a run_events row: that update rewrites the
-- whole row anyway (it is not a HOT update), so the batch costs its bytes only, not a second tuple,
-- a primary-key entry and, through run_events' foreign key, a lock record on the run row (≈ 240 B
-- of WAL a turn). The four columns are one packed row as run_events stores it (storage/runs.ts
-- packRunEvents: a single event, or a batch with ids tail_first_seq .. tail_seq); readers take it
-- after the run's run_events rows (listRunEvents). Rows closed before keep their events where they are.
alter table runs add column tail_seq integer;
alter table runs add column tail_first_seq integer;
alter table runs add column tail_event text;
alter table runs add column tail_data json;

-- A statement that must not commit what it wrote so far fails with this (a turn's commit whose run
-- was closed by crash recovery between its read and its update: storage/turn-commit.ts). Plain SQL
-- has no way to raise; volatile, so it runs only in the branch that calls it.
create function abort_statement(reason text) returns integer
  language plpgsql volatile
  as $$ begin raise exception using errcode = 'P0001', message = reason; end $$;
