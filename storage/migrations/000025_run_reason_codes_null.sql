-- A run without reason codes stores null, not an empty array (issue 19: WAL per turn): '{}' is a
-- 16-byte array header in the run row as inserted and again in the row as closed, and most turns
-- have no reason code. Readers take null as no codes (storage/runs.ts, storage/outcome-stats.ts);
-- rows stored before keep their '{}'.
alter table runs alter column reason_codes drop not null;
alter table runs alter column reason_codes set default null;
