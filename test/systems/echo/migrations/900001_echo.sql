-- The echo system's conversations: the kind joins the list the conversations table accepts.
alter table conversations drop constraint conversations_kind_check;
alter table conversations add constraint conversations_kind_check check (kind in ('workbench', 'clinic', 'evidence', 'test', 'echo'));
