-- Conversation, run and process (runs.owner) ids are stored as `uuid`, not as their 36-character
-- text (issue 19: WAL per turn). A turn writes a run id or a conversation id about twenty times: in
-- the rows of runs, messages, run_events and machine_events and in their index entries; each is
-- 16 bytes instead of 37 (in an index entry 24 instead of 48 with the alignment). The server has
-- always made these ids (crypto.randomUUID, then UUIDv7), so every stored one converts; an id a
-- client sends that is not a UUID names no row, and the repositories answer "not found" for it
-- before any SQL (storage/ids.ts).
--
-- Every column that references conversations(id) or runs(id) changes with them, whichever system's
-- table holds it: the foreign keys are found in the catalog, dropped, and added back as they were.
create temporary table id_foreign_keys on commit drop as
  select c.conrelid::regclass::text as tbl, c.conname, pg_get_constraintdef(c.oid) as def,
         (select array_agg(a.attname::text) from pg_attribute a
           where a.attrelid = c.conrelid and a.attnum = any (c.conkey)) as cols
    from pg_constraint c
   where c.contype = 'f' and c.confrelid in ('conversations'::regclass, 'runs'::regclass);

do $$
declare
  fk record;
  col text;
begin
  for fk in select * from id_foreign_keys loop
    execute format('alter table %s drop constraint %I', fk.tbl, fk.conname);
  end loop;
  alter table conversations alter column id type uuid using id::uuid;
  alter table runs alter column id type uuid using id::uuid;
  for fk in select * from id_foreign_keys loop
    foreach col in array fk.cols loop
      execute format('alter table %s alter column %I type uuid using %I::uuid', fk.tbl, col, col);
    end loop;
  end loop;
  for fk in select * from id_foreign_keys loop
    execute format('alter table %s add constraint %I %s', fk.tbl, fk.conname, fk.def);
  end loop;
end $$;

-- Run ids kept without a foreign key (a message or a log entry outlives nothing, but the run it names
-- may be written in the same statement, or be another system's), and the owning process's id.
alter table messages alter column run_id type uuid using run_id::uuid;
alter table machine_events alter column run_id type uuid using run_id::uuid;
alter table idempotency_keys alter column run_id type uuid using run_id::uuid;
alter table runs alter column owner type uuid using owner::uuid;
