import type { Tx } from "../../../storage/db";
import { isUuid } from "../../../storage/ids";
import type { Handling, InboxStatus } from "../../../storage/inbox";
import type { SnapshotRow } from "../../../storage/snapshots";
import { commitMode, insertRunFrom, type RunStartRow } from "../../../storage/runs";
import { accessCondition, surelyDenied, type ConversationAccess } from "../../../storage/conversation-credentials";

/** What a clinic turn reads before it starts, fetched in one statement. */
export interface ClinicTurnContext {
  threadId: string;
  /** The dialogue's stored snapshot; null before the first turn. */
  snapshot: SnapshotRow | null;
  /** The last messages, oldest first. */
  history: { role: string; text: string }[];
  /**
   * The active settings versions, as `loadRegistry` names them ("code@v,…,steps:branch@v"):
   * the registry is rebuilt only when this changes. Empty when the tenant has no settings yet.
   */
  settingsVersions: string;
  /**
   * The settings versions the thread's last message that names them names (null: none does):
   * a reply answered with the same ones does not name them again (systems/clinic/message-meta.ts).
   */
  namedSettings: string | null;
  /** Who handles the thread (storage/inbox.ts `readHandling`), read in the same statement. */
  handling: Handling;
}

/**
 * The thread (of this tenant, of the clinic, reachable with the request's `access`: the
 * conversation's credential is checked in this same statement), its snapshot, its recent history and which
 * settings versions are active — one round trip instead of seven separate reads. Null when
 * there is no such thread.
 *
 * With `start`, the same statement starts the turn's run (storage/runs.ts `RunStart`), only if
 * the thread exists: a turn's first round trip both reads and claims, as its last one (the
 * commit) writes everything. A running run of the thread fails it with a unique violation, as
 * `startRun` does. The read is the statement's snapshot, taken before the insert: it does not
 * see the run.
 */
export async function loadClinicTurnContext(
  sql: Tx,
  tenantId: string,
  threadId: string,
  historyLimit: number,
  access: ConversationAccess,
  start?: { run: RunStartRow; asyncCommit: boolean },
): Promise<ClinicTurnContext | null> {
  if (!isUuid(threadId) || surelyDenied(access)) return null;
  const starting = start
    ? sql`with _ as (${commitMode(sql, start.asyncCommit)}),
          t as (select id from conversations where id = ${threadId} and tenant_id = ${tenantId} and kind = 'clinic'
                ${accessCondition(sql, access)}),
          r as (${insertRunFrom(sql, start.run, sql`t, _`)})`
    : sql``;
  const rows = await sql<
    {
      id: string;
      key: string | null;
      machine_id: string | null;
      machine_version: number | null;
      row_version: number | null;
      snapshot: unknown;
      history: { role: string; text: string }[] | null;
      settings: string | null;
      named_settings: string | null;
      status: InboxStatus;
      escalated: boolean;
      contact_phone: string | null;
    }[]
  >`
    ${starting}
    select c.id, c.status, c.escalated, c.contact_phone, s.key, s.machine_id, s.machine_version, s.row_version, s.snapshot,
      (select json_agg(json_build_object('role', m.role, 'text', m.text) order by m.seq)
         from (select role, text, seq from messages where conversation_id = c.id order by seq desc limit ${historyLimit}) m) as history,
      concat_ws(',',
        (select string_agg(b.code || '@' || b.version, ',' order by b.code) from clinic_branches b where b.tenant_id = c.tenant_id and b.active),
        (select string_agg('steps:' || g.branch || '@' || g.version, ',' order by g.branch) from clinic_step_graphs g where g.tenant_id = c.tenant_id and g.active)
      ) as settings,
      (select m.meta ->> 'settings' from messages m
       where m.conversation_id = c.id and (m.meta ->> 'settings') is not null order by m.seq desc limit 1) as named_settings
    from conversations c
    left join machine_snapshots s on s.key = c.id::text
    where c.id = ${threadId} and c.tenant_id = ${tenantId} and c.kind = 'clinic' ${accessCondition(sql, access, "c")}`;
  const r = rows[0];
  if (!r) return null;
  return {
    threadId: r.id,
    snapshot:
      r.key === null
        ? null
        : {
            key: r.key,
            conversationId: r.id,
            machineId: r.machine_id!,
            machineVersion: r.machine_version!,
            rowVersion: r.row_version!,
            snapshot: r.snapshot,
          },
    history: r.history ?? [],
    settingsVersions: r.settings ?? "",
    namedSettings: r.named_settings,
    handling: { status: r.status, escalated: r.escalated, contactPhone: r.contact_phone },
  };
}
