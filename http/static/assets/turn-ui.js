// One chat turn on Песочница and Workbench: the Stop button, and what a failed turn leaves
// behind — never an empty blinking bubble, always a Russian message, and the typed text back
// in the composer so nothing the user wrote is lost.
import { $, ApiError, el } from "./common.js";

const byCode = {
  invalid_request: "Сервер не принял сообщение. Проверьте текст и отправьте ещё раз.",
  payload_too_large: "Сообщение слишком большое. Сократите его и отправьте ещё раз.",
  unauthorized: "Нет доступа: укажите токен API в шапке страницы.",
  forbidden: "У этого токена нет прав на это действие.",
  not_found: "Диалог не найден: начните новый.",
  conflict: "Диалог изменился параллельно. Обновите страницу и отправьте ещё раз.",
  rate_limited: "Слишком много запросов. Подождите немного и отправьте ещё раз.",
  internal: "Ошибка сервера. Ответ не сохранён — отправьте сообщение ещё раз.",
};
const cyrillic = /[а-яё]/i;

/** The server's own message when it is Russian (CONTRACT §6), else a Russian one for its code or status. */
export function russianMessage(e) {
  if (e?.name === "AbortError") return "Остановлено. Текст сообщения возвращён в поле ввода.";
  // A validation message names the field first ("text: …"): the user needs only what is wrong.
  const message = String(e?.message ?? "").replace(/^[a-zA-Z_.\d]+: /, "");
  if (cyrillic.test(message)) return message;
  if (e?.code && byCode[e.code]) return byCode[e.code];
  if (e instanceof ApiError) return `Сервер ответил ошибкой ${e.status}. Отправьте сообщение ещё раз.`;
  if (e?.code) return "Ход не выполнен. Отправьте сообщение ещё раз.";
  return "Нет связи с сервером. Проверьте подключение и отправьте сообщение ещё раз.";
}

/** Starts a turn: brings the chat into view and shows Stop (which aborts the request) until `end()`. */
export function startTurn() {
  // The whole chat on the screen (on a phone the page may have been scrolled to the panels below
  // it): the reply will appear where the person is looking, above the composer they typed in.
  $("#composer")?.closest(".chat")?.scrollIntoView({ block: "nearest" });
  const ac = new AbortController();
  const stop = $("#stop");
  if (stop) {
    stop.hidden = false;
    stop.onclick = () => ac.abort();
  }
  return {
    signal: ac.signal,
    get stopped() {
      return ac.signal.aborted;
    },
    end() {
      if (stop) {
        stop.hidden = true;
        stop.onclick = null;
      }
    },
  };
}

/**
 * A turn that produced no answer: the bubble stops blinking and shows the message instead of
 * (not after) any half-streamed text, which was never stored; the typed text returns to the
 * composer unless the user has started typing something else.
 */
export function failTurn(bubble, body, message, typed, code) {
  bubble.classList.remove("streaming");
  bubble.dataset.failed = "true";
  body.replaceChildren();
  bubble.append(
    el(
      "div",
      { class: "error-box", dataset: { error: "turn" } },
      el("span", { dataset: { message: "" } }, message),
      // The contract's code, for whoever reads the logs (not a sentence for the user).
      code ? el("span", { class: "muted small", dataset: { code } }, ` (${code})`) : null,
    ),
  );
  const box = $("#text");
  if (typed !== undefined && box && !box.value.trim()) box.value = typed;
}

/**
 * After a turn: the transcript's end in view, unless that hides the start of the reply (a
 * clarification's question, a long answer) — a reply is read from its first line. Only the
 * transcript scrolls; the page keeps the composer where the person typed.
 */
export function showReply(messages, bubble) {
  messages.scrollTop = messages.scrollHeight;
  if (!bubble?.isConnected) return;
  const over = bubble.getBoundingClientRect().top - messages.getBoundingClientRect().top;
  if (over < 0) messages.scrollTop += over - 4;
}
