-- Assignment (issue 43): who answers a conversation — set by an assignment, a take or a transfer
-- (the clinic dialogue machine's `assignee`, mirrored here for the inbox's «мои / не назначенные»
-- filter), kept over a release, cleared by close. A thread taken before this migration is its
-- holder's.
alter table conversations add column assigned_to text;
update conversations set assigned_to = taken_by where status = 'taken' and taken_by is not null;
-- «Мои»: one operator's conversations of a tenant (a small set; the list's own order then applies).
create index conversations_assigned_to on conversations (tenant_id, assigned_to) where assigned_to is not null;
