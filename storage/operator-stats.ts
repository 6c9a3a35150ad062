import type { Tx } from "./db";
import { roundedMs, scopedThreadEvents, type ThreadEventScope } from "./thread-events";

/**
 * The hand-off per operator (issue 43 item 4), from the threads' event logs
 * (storage/thread-events.ts), like handoff-stats.ts per reason: how many threads each took, how
 * fast the first reply came after their take, how many messages they wrote, how many threads
 * they handed to a colleague and received from one.
 */

/**
 * The event kind of a hand-over between operators. Named once here so the counters follow the
 * kind the transfer action writes (data: `from` — who gave it, `to` — who received it;
 * `operator` is read as the giver when `from` is absent).
 */
export const TRANSFER_EVENT_KIND = "conversation.transferred";

export interface OperatorStats {
  operator: string;
  taken: number;
  firstReplies: number;
  avgTimeToFirstReplyMs: number | null;
  medianTimeToFirstReplyMs: number | null;
  messages: number;
  transfersOut: number;
  transfersIn: number;
}

export async function operatorStats(sql: Tx, f: ThreadEventScope): Promise<OperatorStats[]> {
  const rows = await sql<
    {
      operator: string;
      taken: number;
      first_replies: number;
      avg_reply: number | null;
      median_reply: number | null;
      messages: number;
      transfers_out: number;
      transfers_in: number;
    }[]
  >`
    with e as (
      select e.kind, e.data, (e.data->>'sinceTakenMs')::float8 as reply_ms, (e.data->>'first')::boolean as first
        ${scopedThreadEvents(sql, f)}
         and e.kind in ('conversation.taken', 'operator.message', ${TRANSFER_EVENT_KIND})),
    who as (
      select kind, data->>'operator' as operator, reply_ms, first, 'act' as side from e
       where kind <> ${TRANSFER_EVENT_KIND} and data->>'operator' is not null
      union all
      select kind, coalesce(data->>'from', data->>'operator'), null, null, 'out' from e
       where kind = ${TRANSFER_EVENT_KIND} and coalesce(data->>'from', data->>'operator') is not null
      union all
      select kind, data->>'to', null, null, 'in' from e where kind = ${TRANSFER_EVENT_KIND} and data->>'to' is not null)
    select operator,
           count(*) filter (where kind = 'conversation.taken')::int as taken,
           count(*) filter (where kind = 'operator.message' and first)::int as first_replies,
           avg(reply_ms) filter (where kind = 'operator.message' and first) as avg_reply,
           percentile_cont(0.5) within group (order by reply_ms) filter (where kind = 'operator.message' and first) as median_reply,
           count(*) filter (where kind = 'operator.message')::int as messages,
           count(*) filter (where side = 'out')::int as transfers_out,
           count(*) filter (where side = 'in')::int as transfers_in
      from who group by operator order by operator`;
  return rows.map((r) => ({
    operator: r.operator,
    taken: r.taken,
    firstReplies: r.first_replies,
    avgTimeToFirstReplyMs: roundedMs(r.avg_reply),
    medianTimeToFirstReplyMs: roundedMs(r.median_reply),
    messages: r.messages,
    transfersOut: r.transfers_out,
    transfersIn: r.transfers_in,
  }));
}
