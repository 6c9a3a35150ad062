// «Обращения» → «Недоставленные вебхуки»: deliveries that failed every attempt within the retry
// horizon (doc/webhooks.md), each with «Отправить снова». Admin tokens only: for any other token,
// or when there are none, the section stays empty.
import { $, api, el, errorText, fmtTime, toast } from "./common.js";

export async function renderDeadLetters(root = $("#dead-letters")) {
  if (!root) return;
  let letters;
  try {
    letters = (await api("/v1/webhooks/dead-letters")).deadLetters;
  } catch {
    root.replaceChildren();
    return;
  }
  if (!letters.length) {
    root.replaceChildren();
    return;
  }
  const resend = (d) => async () => {
    try {
      await api(`/v1/webhooks/dead-letters/${d.id}/redeliver`, { method: "POST" });
      toast(`Вебхук ${d.event} #${d.seq} снова в очереди`);
      await renderDeadLetters(root);
    } catch (e) {
      toast(errorText(e));
    }
  };
  root.replaceChildren(
    el("h3", {}, `Недоставленные вебхуки: ${letters.length}`),
    ...letters.map((d) =>
      el(
        "div",
        { class: "list-item" },
        el("div", { class: "small" }, el("b", {}, d.event), ` #${d.seq} · ${fmtTime(d.createdAt)}`),
        el("div", { class: "small muted mono" }, `${d.conversationId} · ${d.attempts} попыток · ${d.lastError ?? ""}`),
        el("button", { class: "secondary", type: "button", onclick: resend(d) }, "Отправить снова"),
      ),
    ),
  );
}
