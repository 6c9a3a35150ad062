import type { Tx } from "./db";
import { roundedMs, scopedThreadEvents, type ThreadEventScope } from "./thread-events";

/**
 * The human hand-off in numbers (issue 32), from the threads' event logs (storage/thread-events.ts):
 * per escalation reason, how many threads operators took and how long the patient waited for the
 * take (from the escalation) and for the first operator message (from the take); how many
 * operator messages, releases and closes, assignments and transfers. A take of a thread that was not escalated counts under
 * `not_escalated`.
 */
export interface HandoffStats {
  reason: string;
  taken: number;
  avgTimeToTakeMs: number | null;
  medianTimeToTakeMs: number | null;
  firstReplies: number;
  avgTimeToFirstReplyMs: number | null;
  medianTimeToFirstReplyMs: number | null;
  operatorMessages: number;
  released: number;
  closed: number;
  /** Assignments of threads nobody held (issue 43). */
  assigned: number;
  /** Held threads handed to a colleague (issue 43). */
  transferred: number;
}

export async function handoffStats(sql: Tx, f: ThreadEventScope): Promise<HandoffStats[]> {
  const rows = await sql<
    {
      reason: string;
      taken: number;
      avg_take: number | null;
      median_take: number | null;
      first_replies: number;
      avg_reply: number | null;
      median_reply: number | null;
      operator_messages: number;
      released: number;
      closed: number;
      assigned: number;
      transferred: number;
    }[]
  >`
    with e as (
      select e.kind, coalesce(e.data->>'reason', 'not_escalated') as reason,
             (e.data->>'waitMs')::float8 as wait_ms, (e.data->>'sinceTakenMs')::float8 as reply_ms,
             (e.data->>'first')::boolean as first
        ${scopedThreadEvents(sql, f)}
         and e.kind <> 'patient.message')
    select reason,
           count(*) filter (where kind = 'conversation.taken')::int as taken,
           avg(wait_ms) filter (where kind = 'conversation.taken') as avg_take,
           percentile_cont(0.5) within group (order by wait_ms) filter (where kind = 'conversation.taken') as median_take,
           count(*) filter (where kind = 'operator.message' and first)::int as first_replies,
           avg(reply_ms) filter (where kind = 'operator.message' and first) as avg_reply,
           percentile_cont(0.5) within group (order by reply_ms) filter (where kind = 'operator.message' and first) as median_reply,
           count(*) filter (where kind = 'operator.message')::int as operator_messages,
           count(*) filter (where kind = 'conversation.released')::int as released,
           count(*) filter (where kind = 'conversation.closed')::int as closed,
           count(*) filter (where kind = 'conversation.assigned')::int as assigned,
           count(*) filter (where kind = 'conversation.transferred')::int as transferred
      from e group by reason order by reason`;
  return rows.map((r) => ({
    reason: r.reason,
    taken: r.taken,
    avgTimeToTakeMs: roundedMs(r.avg_take),
    medianTimeToTakeMs: roundedMs(r.median_take),
    firstReplies: r.first_replies,
    avgTimeToFirstReplyMs: roundedMs(r.avg_reply),
    medianTimeToFirstReplyMs: roundedMs(r.median_reply),
    operatorMessages: r.operator_messages,
    released: r.released,
    closed: r.closed,
    assigned: r.assigned,
    transferred: r.transferred,
  }));
}
