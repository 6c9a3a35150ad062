-- Conversation kinds as rows the server owns, not a CHECK naming the systems: the server adds
-- the kinds of the systems it serves at start (storage/conversation-kinds.ts, read from the
-- systems list), so a new dialogue system needs no migration of this shared table. The foreign
-- key keeps the database refusing a kind no served system declared.
-- Seeded with what the old check accepted (every stored row has one of these); 'test' is the
-- kind of the tests' own small machines.
create table conversation_kinds (
  kind text primary key
);
insert into conversation_kinds (kind) values ('workbench'), ('clinic'), ('evidence'), ('test');
alter table conversations drop constraint conversations_kind_check;
alter table conversations
  add constraint conversations_kind_fkey foreign key (kind) references conversation_kinds (kind);
