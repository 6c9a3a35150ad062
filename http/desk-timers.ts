import { readEscalation } from "../storage/inbox";
import { raiseDueReminders, requeueSilent, silentToRequeue } from "../storage/reminders";
import { threadWakeKey } from "../storage/thread-events";
import type { Deps } from "./deps";
import { announceHandling, presenceOf } from "./presence";

/**
 * The desk's reminders (issue 43 item 4): every `sweepMs` each process reads what is due from
 * the database (storage/reminders.ts) — deadlines are data, so a restart loses none — raises it
 * (row + webhook outbox row in one transaction), tells the inbox pages (presence board, across
 * processes) and, with REMIND_REQUEUE, returns a silent held thread to the queue: released
 * through the dialogue machine like an operator's release, then waiting for any operator again.
 * A sweep never overlaps the previous one; a failed one is retried by the next.
 */
export function startDeskTimers(deps: Deps): { stop(): Promise<void>; sweep(): Promise<void> } {
  const desk = deps.config.desk;
  let inFlight: Promise<void> | null = null;
  let stopped = false;

  const requeue = async () => {
    for (const r of await silentToRequeue(deps.db.sql)) {
      if (stopped) return;
      const hooks = deps.systems.find((s) => s.name === r.system)?.inbox;
      const esc = await readEscalation(deps.db.sql, r.conversationId);
      try {
        await hooks?.operate(
          deps.db.sql,
          r.tenantId,
          r.conversationId,
          { kind: "release" },
          {
            webhook: deps.webhook.enabled,
          },
        );
      } catch {
        // Released meanwhile by someone (409 not held): it is out of the silence all the same.
      }
      // Back in the queue: waiting for a human, on top of the inbox, with the reason it had.
      await requeueSilent(deps.db.sql, r.conversationId, esc?.reason ?? "operator_silent");
      deps.waker.poke(threadWakeKey(r.conversationId));
      announceHandling(deps, r.tenantId, r.conversationId, "escalate");
    }
  };

  const pass = async () => {
    const raised = await raiseDueReminders(deps.db.sql, {
      untakenAfterMs: desk.untakenAfterMs,
      silentAfterMs: desk.silentAfterMs,
      webhook: deps.webhook.enabled,
    });
    if (raised.length) deps.webhook.kick();
    const board = presenceOf(deps);
    for (const r of raised)
      board.announce({
        tenantId: r.tenantId,
        event: "reminder",
        data: { conversationId: r.conversationId, kind: r.kind },
      });
    if (desk.requeueSilent && desk.silentAfterMs !== null) {
      await requeue();
      deps.webhook.kick();
    }
  };

  const sweep = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    inFlight ??= pass()
      .catch((e) => deps.log(`desk: reminder sweep failed: ${(e as Error).message}`))
      .finally(() => (inFlight = null));
    return inFlight;
  };
  const timer = setInterval(() => void sweep(), desk.sweepMs);
  timer.unref();
  return {
    sweep,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
    },
  };
}
