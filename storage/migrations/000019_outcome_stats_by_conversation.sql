-- A turn's writes, smaller (issue 19: WAL per turn). runs_outcome_stats (000013) took one index
-- entry per run, written when the run closed, for a page an operator opens now and then.
-- /v1/stats/outcomes now reaches a tenant's runs through its conversations instead
-- (conversations_tenant, then runs_conversation; storage/outcome-stats.ts): the entries the
-- turn writes anyway.
drop index if exists runs_outcome_stats;
