-- A turn's writes, smaller (issue 19: WAL per turn). A turn's snapshot update is a HOT update, whose
-- WAL record holds only the new tuple's bytes that differ from the old one's between an unchanged
-- prefix and an unchanged suffix. The snapshot sat before updated_at, which changes on every turn,
-- so no suffix was ever shared and the whole snapshot was written again: now the snapshot is the
-- last column, and the end of it a turn did not change (the rest of the state after the slots, the
-- whole snapshot when the state stayed) is not written again.
alter table machine_snapshots add column snapshot_last json;
update machine_snapshots set snapshot_last = snapshot;
alter table machine_snapshots alter column snapshot_last set not null;
alter table machine_snapshots drop column snapshot;
alter table machine_snapshots rename column snapshot_last to snapshot;
