-- The conversation's per-turn touch as a HOT update (issue 19: WAL per turn).
--
-- Every turn moves conversations.last_activity_at (the messages trigger of 000010). That column
-- was indexed (conversations_inbox), so each touch wrote a new heap tuple plus an entry in every
-- index of conversations (its key, the tenant index, the inbox index): ≈ 330 B of WAL per turn.
-- Now the inbox index holds the activity's hour instead of the instant: a touch within the same
-- hour changes no indexed value, so PostgreSQL updates the row in place (HOT) and no index.
--
-- The inbox order is unchanged: the hour is a non-decreasing function of last_activity_at, so
-- ordering by (escalated, activity_hour, last_activity_at, id) is the same order as by
-- (escalated, last_activity_at, id); the index gives it up to the hour and an incremental sort
-- orders the rows within one hour (storage/inbox.ts). The old index did not give that order at
-- all (escalated ascending against the query's descending), so a page sorted all of a tenant's
-- conversations; now the first page reads about one hour's worth.
alter table conversations add column activity_hour timestamptz
  generated always as (date_bin('1 hour', last_activity_at, timestamptz '2000-01-01 00:00:00+00')) stored;
drop index if exists conversations_inbox;
create index conversations_inbox on conversations (tenant_id, escalated desc, activity_hour desc);
