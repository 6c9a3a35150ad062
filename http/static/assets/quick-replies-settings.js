// Настройки → «Быстрые ответы» (issue 43): the tenant's reply templates for the inbox composer
// (a chip per template; `/` and a word filters them). Operators manage them: GET/POST/PUT/DELETE
// /v1/inbox/quick-replies.
import { $, api, el, errorText, toast } from "./common.js";

const panel = $("#quick-replies-panel");

function editor(t, reload) {
  const title = el("input", {
    type: "text",
    value: t?.title ?? "",
    maxlength: 80,
    placeholder: "название, напр. адрес",
    "aria-label": "Название шаблона",
  });
  const text = el("textarea", { placeholder: "Текст ответа пациенту", "aria-label": "Текст шаблона" });
  text.value = t?.text ?? "";
  const save = async () => {
    try {
      const body = { title: title.value, text: text.value };
      if (t) await api(`/v1/inbox/quick-replies/${t.id}`, { method: "PUT", body });
      else await api("/v1/inbox/quick-replies", { method: "POST", body });
      toast(t ? "Шаблон сохранён" : "Шаблон добавлен");
      await reload();
    } catch (e) {
      toast(errorText(e));
    }
  };
  const remove = async () => {
    if (!confirm(`Удалить шаблон «${t.title}»?`)) return;
    try {
      await api(`/v1/inbox/quick-replies/${t.id}`, { method: "DELETE" });
      await reload();
    } catch (e) {
      toast(errorText(e));
    }
  };
  return el(
    "div",
    { class: "quick-reply-edit col", dataset: { quick: t?.title ?? "" } },
    title,
    text,
    el(
      "div",
      { class: "row" },
      el(
        "button",
        { type: "button", class: t ? "secondary" : "", onclick: save, dataset: { action: t ? "save" : "add" } },
        t ? "Сохранить" : "Добавить",
      ),
      t ? el("button", { type: "button", class: "danger", onclick: remove }, "Удалить") : null,
    ),
  );
}

async function reload() {
  try {
    const { items } = await api("/v1/inbox/quick-replies");
    $("#quick-replies").replaceChildren(
      ...items.map((t) => editor(t, reload)),
      el("h3", {}, "Новый шаблон"),
      editor(null, reload),
    );
  } catch (e) {
    $("#quick-replies").replaceChildren(el("div", { class: "error-box" }, errorText(e)));
  }
}

if (panel) reload();
