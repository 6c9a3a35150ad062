// «Обращения»: every system's conversations for an operator — escalated ones first, with the
// reason, the patient's contact and the transcript; take / release / close / erase.
import { $, api, el, errorText, fmtTime, renderHeader, toast } from "./common.js";

renderHeader("/inbox.html");

const reasonRu = {
  acute_pain: "острое состояние",
  surgery: "операция",
  angry: "раздражённый тон",
  explicit_request: "просьба пациента",
  routing_loop: "защита от петли",
};
const statusRu = { open: "у бота", taken: "у оператора", closed: "закрыт" };
const systemRu = { clinic: "клиника", workbench: "Workbench", evidence: "Evidence" };

let selected = new URLSearchParams(location.hash.slice(1)).get("id");
let cursor = null;
/** Pages added with «Показать ещё»: a periodic refresh would fold them back, so it waits. */
let extraPages = 0;

function query() {
  const p = new URLSearchParams();
  for (const k of ["q", "system", "status"]) if ($(`#${k}`).value.trim()) p.set(k, $(`#${k}`).value.trim());
  if ($("#escalated").checked) p.set("escalated", "true");
  if (cursor) p.set("cursor", cursor);
  return p.toString();
}

function reasonText(r) {
  return r ? (reasonRu[r] ?? r) : "причина не названа";
}

function itemNode(it) {
  return el(
    "div",
    {
      class: `inbox-item${it.escalated ? " escalated" : ""}${it.id === selected ? " on" : ""}`,
      dataset: { id: it.id, status: it.status, escalated: String(it.escalated) },
      onclick: () => select(it.id),
    },
    el(
      "div",
      { class: "row" },
      el("span", { class: "badge gray" }, systemRu[it.system] ?? it.system),
      it.escalated
        ? el(
            "span",
            { class: "badge err", dataset: { badge: "reason" } },
            `ждёт человека · ${reasonText(it.escalationReason)}`,
          )
        : null,
      el(
        "span",
        {
          class: `badge ${it.status === "taken" ? "warn" : it.status === "closed" ? "gray" : "ok"}`,
          dataset: { badge: "status" },
        },
        statusRu[it.status] ?? it.status,
      ),
      it.contactPhone ? el("span", { class: "badge", dataset: { badge: "contact" } }, it.contactPhone) : null,
      el("span", { class: "muted small", style: "margin-left:auto" }, fmtTime(it.lastActivityAt)),
    ),
    el("div", { class: "preview" }, it.lastMessage ? it.lastMessage.text : "сообщений нет"),
  );
}

// Each reload is numbered: a response that comes back after a later reload started (the periodic one
// racing an operator's action) is dropped, so the list never shows a status older than the detail's.
let listRequest = 0;

async function loadList(append = false) {
  const mine = ++listRequest;
  if (!append) cursor = null;
  extraPages = append ? extraPages + 1 : 0;
  try {
    const page = await api(`/v1/inbox/conversations?${query()}`);
    if (mine !== listRequest) return;
    const nodes = page.items.map(itemNode);
    if (append) $("#items").append(...nodes);
    else $("#items").replaceChildren(...(nodes.length ? nodes : [el("div", { class: "muted" }, "Обращений нет.")]));
    cursor = page.nextCursor;
    $("#more").hidden = !cursor;
  } catch (e) {
    if (mine !== listRequest) return;
    $("#items").replaceChildren(el("div", { class: "error-box" }, `Не удалось загрузить обращения: ${errorText(e)}`));
  }
}

async function act(id, action) {
  try {
    if (action === "delete") {
      if (!confirm("Удалить диалог и все его данные безвозвратно?")) return;
      await api(`/v1/inbox/conversations/${id}`, { method: "DELETE" });
      toast("Диалог удалён");
      selected = null;
      location.hash = "";
      $("#detail").replaceChildren(el("div", { class: "muted" }, "Диалог удалён."));
    } else {
      await api(`/v1/inbox/conversations/${id}/${action}`, {
        method: "POST",
        body: action === "take" ? { operator: "оператор" } : {},
      });
      toast(
        {
          take: "Диалог у вас: бот только просит подождать",
          release: "Диалог возвращён боту",
          close: "Обращение закрыто",
        }[action],
      );
      await select(id);
    }
  } catch (e) {
    toast(errorText(e));
  }
  await loadList();
}

async function select(id) {
  selected = id;
  location.hash = `id=${id}`;
  for (const n of document.querySelectorAll(".inbox-item")) n.classList.toggle("on", n.dataset.id === id);
  try {
    const c = await api(`/v1/inbox/conversations/${id}`);
    const buttons = [
      c.system === "clinic" && c.status !== "taken"
        ? el("button", { id: "take", type: "button", onclick: () => act(id, "take") }, "Взять")
        : null,
      c.status === "taken" || c.escalated
        ? el(
            "button",
            { id: "release", class: "secondary", type: "button", onclick: () => act(id, "release") },
            "Вернуть боту",
          )
        : null,
      c.status !== "closed"
        ? el("button", { id: "close", class: "secondary", type: "button", onclick: () => act(id, "close") }, "Закрыть")
        : null,
      el("button", { id: "erase", class: "danger", type: "button", onclick: () => act(id, "delete") }, "Удалить"),
    ];
    $("#detail").replaceChildren(
      el(
        "h2",
        {},
        `${systemRu[c.system] ?? c.system} · ${c.id.slice(0, 8)}`,
        el("span", { class: "right row" }, buttons),
      ),
      el(
        "div",
        { class: "kv" },
        el("div", {}, "Статус"),
        el("div", { dataset: { field: "status" } }, statusRu[c.status] ?? c.status, c.takenBy ? ` (${c.takenBy})` : ""),
        el("div", {}, "Ждёт человека"),
        el("div", { dataset: { field: "escalated" } }, c.escalated ? `да · ${reasonText(c.escalationReason)}` : "нет"),
        el("div", {}, "Контакт пациента"),
        el("div", { dataset: { field: "contact" } }, c.contactPhone ?? "не оставлен"),
        el("div", {}, "Создан"),
        el("div", {}, fmtTime(c.createdAt)),
        c.system === "clinic"
          ? [
              el("div", {}, "Песочница"),
              el("div", {}, el("a", { href: `/sandbox.html#thread=${c.id}` }, "открыть диалог")),
            ]
          : null,
      ),
      el(
        "div",
        { class: "transcript", id: "transcript" },
        c.messages.length
          ? c.messages.map((m) =>
              el(
                "div",
                {
                  class: `msg ${m.role === "user" ? "user" : m.role === "assistant" ? "assistant" : "system"}`,
                  title: fmtTime(m.createdAt),
                },
                m.text,
              ),
            )
          : el("div", { class: "muted" }, "Сообщений нет."),
      ),
    );
  } catch (e) {
    $("#detail").replaceChildren(el("div", { class: "error-box" }, `Не удалось открыть диалог: ${errorText(e)}`));
  }
}

$("#filters").addEventListener("submit", (ev) => {
  ev.preventDefault();
  loadList();
});
for (const id of ["system", "status", "escalated"]) $(`#${id}`).addEventListener("change", () => loadList());
$("#q").addEventListener("input", () => {
  clearTimeout(window.__inboxSearch);
  window.__inboxSearch = setTimeout(() => loadList(), 250);
});
$("#refresh").addEventListener("click", () => loadList().then(() => selected && select(selected)));
$("#more").addEventListener("click", () => loadList(true));

// New escalations show up without a reload.
setInterval(() => {
  if (!document.hidden && extraPages === 0) loadList();
}, 10_000);

(async () => {
  await loadList();
  if (selected) await select(selected);
  document.body.dataset.ready = "true";
})();
