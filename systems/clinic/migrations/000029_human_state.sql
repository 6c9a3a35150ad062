-- Human takeover (issue 32): who holds a clinic thread is now the dialogue machine's `handler`
-- region (bot | human), read from `context.human` of its snapshot. Threads an operator had taken
-- before (the inbox's status `taken`, when systems/clinic/hold.ts answered beside the machine) get
-- that context, so after the upgrade they are held by the same operator as before.
update machine_snapshots s
   set snapshot = jsonb_set(
         s.snapshot::jsonb, '{context,human}',
         jsonb_build_object('operator', coalesce(c.taken_by, 'оператор'),
                            'since', to_char(coalesce(c.taken_at, now()) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
       )::json
  from conversations c
 where s.conversation_id = c.id and s.machine_id = 'clinic-dialogue' and c.status = 'taken';
