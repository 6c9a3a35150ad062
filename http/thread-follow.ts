import type { Deps } from "./deps";
import { SseWriter } from "./sse-writer";
import type { SseStream } from "./sse-response";
import { listThreadEvents, threadWakeKey } from "../storage/thread-events";
import { conversationExists } from "../storage/conversations";
import { presenceOf, type ThreadPresence } from "./presence";

/**
 * Follows a thread's event log (issue 32): replays what is stored after `after` (Last-Event-ID),
 * then delivers each new event as it commits — woken in this process by the writer's `poke`, in
 * another process by LISTEN/NOTIFY on a PostgreSQL server (the run waker's channel); never by a
 * timer. Each event's SSE id is its number in the log, so a reconnect misses nothing and every
 * tab of the thread gets every event. Ends when the client goes or the conversation is erased.
 * Between them, `operator.typing` (issue 43): an operator types in this thread's composer —
 * ephemeral, without an id, so it moves no Last-Event-ID; who merely has the thread open is not said.
 */
const THREAD_PAGE = 500;

export async function followThread(deps: Deps, stream: SseStream, conversationId: string, after: number) {
  const writer = new SseWriter(stream);
  const key = threadWakeKey(conversationId);
  const gone = new AbortController();
  stream.onAbort(() => gone.abort());
  let last = after;
  const stopTyping = followTyping(deps, writer, conversationId);
  let woken = false;
  try {
    while (!writer.isClosed && !gone.signal.aborted) {
      // Armed before reading, so an event committed while this reads still wakes the next wait.
      const news = deps.waker.arm(key);
      const rows = await listThreadEvents(deps.db.sql, conversationId, last, THREAD_PAGE);
      for (const e of rows) {
        writer.send({ seq: e.seq, event: e.kind, data: { ...e.data, at: e.at } });
        last = e.seq;
      }
      if (rows.length >= THREAD_PAGE) continue; // a full page: there may be more
      // Woken with nothing new: the conversation may have been erased (erasure announces it).
      if (rows.length === 0 && woken && !(await conversationExists(deps.db.sql, conversationId))) break;
      // Nothing is read again until a write announces the thread (or LISTEN reconnects): an idle
      // follower costs no statement (issue 47).
      const why = await news.wait(gone.signal);
      if (why === "aborted") break;
      woken = true;
    }
  } catch {
    // The database went away under a shutdown: the stream ends; the client reconnects elsewhere.
  }
  stopTyping();
  await writer.drain();
  writer.close();
}

/** Tells the patient's stream when an operator starts or stops typing (only changes; the first typer's name). */
function followTyping(deps: Deps, writer: SseWriter, conversationId: string): () => void {
  const board = presenceOf(deps);
  let shown: string | null = null;
  const show = (p: ThreadPresence) => {
    const now = p.typing[0] ?? null;
    if (now === shown) return;
    shown = now;
    writer.sendEphemeral("operator.typing", { typing: now !== null, operator: now });
  };
  const first = board.ofConversation(conversationId);
  if (first.typing.length) show(first);
  return board.subscribe((n) => {
    if (n.event === "presence" && n.data.conversationId === conversationId) show(n.data);
  });
}
