-- One clarification answer has one authority (issue 44): the Interaction's snapshot, whose
-- `awaiting_clarification` now holds the question as child states. The `clarifications` rows stay
-- as its projection, written in the same turn; the claim-token protocol (000008, 000024) and the
-- clarification machine's own snapshots and logs go. Those snapshots only repeated their row
-- (open → answered | unclear | cancelled | superseded, the candidates, the answer message), which
-- keeps every fact they held; their logs replayed nothing the Interaction's log does not.
alter table clarifications drop column claim_token;
alter table clarifications drop column claim_run_id;
alter table clarifications drop column claimed_at;
delete from machine_events where snapshot_key like 'clarification:%';
delete from machine_snapshots where key like 'clarification:%' and machine_id = 'clarification';
