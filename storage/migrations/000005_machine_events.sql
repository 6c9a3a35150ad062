-- The event log of every machine the driver runs, not only the Workbench's: the events a machine
-- was given, in order, committed in the same transaction as its snapshot. Replaying them through
-- the pure machine reproduces the snapshot (DESIGN, principle 2: every turn replayable).
alter table workbench_machine_events rename to machine_events;
alter index workbench_machine_events_pkey rename to machine_events_pkey;
alter table machine_events rename constraint workbench_machine_events_conversation_id_fkey to machine_events_conversation_id_fkey;
-- Which machine definition took the events: "<machine id>@<version>", and for a machine generated
-- from settings (the clinic dialogue) the settings versions after "|". Null on older rows.
alter table machine_events add column machine text;
