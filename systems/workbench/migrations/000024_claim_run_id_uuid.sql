-- A clarification's claim names the run that holds it: a run id, stored as `uuid` like every run id
-- since migration 000023.
alter table clarifications alter column claim_run_id type uuid using claim_run_id::uuid;
