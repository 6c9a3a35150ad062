// A clinic thread's live events (GET /v1/clinic/threads/{id}/events): an operator took the
// thread, wrote, released or closed it; the patient wrote while it is held. Read with fetch (the
// token goes in a header); a dropped connection resumes with Last-Event-ID, so nothing is missed
// and nothing is shown twice.
import { conversationToken, el, readEvents, token } from "./common.js";

/** Follows from event `after` (0: the whole log); returns stop(). */
export function followThread(threadId, onEvent, { after = 0 } = {}) {
  const ac = new AbortController();
  let last = after;
  (async () => {
    for (let failures = 0; !ac.signal.aborted;) {
      try {
        const headers = { accept: "text/event-stream", "last-event-id": String(last) };
        if (token()) headers.authorization = `Bearer ${token()}`;
        // The thread's own credential (a `chat` token needs it; common.js keeps it from the creation).
        if (conversationToken(threadId)) headers["x-conversation-token"] = conversationToken(threadId);
        const res = await fetch(`/v1/clinic/threads/${encodeURIComponent(threadId)}/events`, {
          headers,
          signal: ac.signal,
        });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        failures = 0;
        await readEvents(res, (e) => {
          const id = Number(e.id);
          if (Number.isInteger(id) && id <= last) return;
          if (Number.isInteger(id)) last = id;
          onEvent(e);
        });
      } catch {
        if (ac.signal.aborted) return;
      }
      failures++;
      await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * 2 ** failures)));
    }
  })();
  return () => ac.abort();
}

/** An operator's message as the patient and the operator see it. */
export function operatorBubble(text, operator) {
  return el(
    "div",
    { class: "msg operator", dataset: { role: "operator" } },
    el(
      "div",
      { class: "who small" },
      operator && operator !== "оператор" ? `Администратор · ${operator}` : "Администратор",
    ),
    el("div", { class: "text" }, text),
  );
}

/** What a thread event says to the patient, in one line (null: nothing to show). */
export function threadNote(e) {
  const d = e.data ?? {};
  if (e.event === "conversation.taken")
    return `Диалог ведёт администратор${d.operator && d.operator !== "оператор" ? ` ${d.operator}` : ""}: ответ придёт сюда.`;
  // A colleague holds it now: the patient learns who answers, as at a take (the bot stays out).
  if (e.event === "conversation.transferred" && d.to) return `Диалог ведёт администратор ${d.to}: ответ придёт сюда.`;
  if (e.event === "conversation.released") return "Администратор вернул диалог помощнику.";
  if (e.event === "conversation.closed") return "Обращение закрыто. Напишите, если понадобится помощь.";
  return null;
}

/**
 * «Администратор печатает…» at the end of `container` while an operator types (the thread
 * stream's ephemeral `operator.typing`, issue 43); removed when they stop or their message arrives.
 */
export function showTyping(container, data) {
  let line = container.querySelector("#operator-typing");
  if (!data?.typing) return line?.remove();
  if (!line) line = el("div", { class: "msg note typing", id: "operator-typing" });
  line.textContent = `Администратор${data.operator && data.operator !== "оператор" ? ` ${data.operator}` : ""} печатает…`;
  container.append(line);
}
