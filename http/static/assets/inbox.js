// «Обращения»: every system's conversations for an operator — escalated ones first, with the
// reason, the patient's contact and the transcript; take / release / close / erase, and — once
// taken — a composer that answers the patient in the thread (issue 32), with the thread's events live;
// «мои / не назначенные / все», assignment and transfer to a colleague (issue 43).
import { $, api, el, errorText, fmtTime, renderHeader, toast } from "./common.js";
import { followThread, operatorBubble } from "./thread-events.js";
import {
  decorate,
  enhanceComposer,
  followDesk,
  loadReminders,
  notesPanel,
  stopWatching,
  watchThread,
} from "./inbox-desk.js";
import { renderDeadLetters } from "./inbox-dead-letters.js";
import { reasonRu } from "./clinic-ui.js";

renderHeader("/inbox.html");
void renderDeadLetters();

const statusRu = { open: "у бота", taken: "у оператора", closed: "закрыт" };
const systemRu = { clinic: "клиника", workbench: "Workbench", evidence: "Evidence" };

let selected = new URLSearchParams(location.hash.slice(1)).get("id");
/** The open thread's presence heartbeat (inbox-desk.js): viewing, typing. */
let watching = null;
let stopFollowing = null;

/**
 * Who this page acts as (issue 43): the token's person, when API_TOKENS binds one — then the server
 * names the author and the page sends no name; otherwise (an integration, the open development
 * mode) the name typed here, kept in this browser.
 */
let me = null;
let colleagues = [];
const operatorName = () => localStorage.getItem("operatorName")?.trim() || "оператор";
const authorBody = () => (me ? {} : { operator: operatorName() });
let cursor = null;
/** Pages added with «Показать ещё»: a periodic refresh would fold them back, so it waits. */
let extraPages = 0;

function query() {
  const p = new URLSearchParams();
  for (const k of ["q", "system", "status", "assigned"]) if ($(`#${k}`).value.trim()) p.set(k, $(`#${k}`).value.trim());
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
      it.assignedTo ? el("span", { class: "badge", dataset: { badge: "assignee" } }, `→ ${it.assignedTo}`) : null,
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
    // Presence and reminder badges (inbox-desk.js) on the rows just drawn.
    if (append) decorate(operatorName());
    else await loadReminders(operatorName());
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
      stopWatching();
      watching = null;
      $("#detail").replaceChildren(el("div", { class: "muted" }, "Диалог удалён."));
    } else {
      await api(`/v1/inbox/conversations/${id}/${action}`, {
        method: "POST",
        body: action === "take" ? authorBody() : {},
      });
      toast(
        {
          take: "Диалог у вас: бот молчит, пациенту отвечаете вы",
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

/** An operator's message into the taken thread: one Idempotency-Key per message, so a retry never sends it twice. */
async function sendOperatorMessage(id, form) {
  const text = form.querySelector("textarea").value;
  if (!text.trim()) return;
  const button = form.querySelector("button");
  button.disabled = true;
  form.dataset.key ??= crypto.randomUUID();
  try {
    await api(`/v1/inbox/conversations/${id}/messages`, {
      method: "POST",
      body: { text, ...authorBody() },
      headers: { "idempotency-key": form.dataset.key },
    });
    form.querySelector("textarea").value = "";
    delete form.dataset.key;
    watching?.sent();
  } catch (e) {
    toast(errorText(e));
  } finally {
    button.disabled = false;
  }
}

function composer(id) {
  const form = el(
    "form",
    { class: "composer operator-composer", id: "operator-composer" },
    el("textarea", {
      id: "operator-text",
      placeholder: "Ответ пациенту… (Enter — отправить, Shift+Enter — новая строка)",
      "aria-label": "Ответ пациенту",
    }),
    el("button", { id: "operator-send", type: "submit" }, "Отправить"),
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    sendOperatorMessage(id, form);
  });
  enhanceComposer(form, () => watching?.typed());
  form.querySelector("textarea").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
  return form;
}

/** Hand the thread to a colleague: `assign` while nobody holds it, `transfer` when someone does. */
async function handOver(id, kind, to) {
  try {
    await api(`/v1/inbox/conversations/${id}/${kind}`, {
      method: "POST",
      body: kind === "transfer" ? { to, ...authorBody() } : { assignee: to || null },
    });
    toast(kind === "transfer" ? `Диалог передан: ${to}` : to ? `Назначен: ${to}` : "Назначение снято");
    await select(id);
  } catch (e) {
    toast(errorText(e));
  }
  await loadList();
}

/**
 * Whether an operator can take the conversation and write in it: its system's machine takes
 * operator actions, and then the server sends the machine's `state` with it (driver/system.ts `inbox`).
 */
const operable = (c) => "state" in c;

function handOverControl(c) {
  if (!operable(c) || c.status === "closed") return null;
  const kind = c.status === "taken" ? "transfer" : "assign";
  const names = colleagues.filter((n) => n !== c.takenBy);
  if (kind === "transfer" && names.length === 0) return null;
  const pick = el(
    "select",
    { id: "hand-over-to", "aria-label": kind === "transfer" ? "Передать коллеге" : "Назначить" },
    kind === "assign" ? el("option", { value: "" }, "никому") : null,
    names.map((n) => el("option", { value: n, selected: n === c.assignedTo }, n)),
  );
  return el(
    "span",
    { class: "row" },
    pick,
    el(
      "button",
      { id: kind, class: "secondary", type: "button", onclick: () => handOver(c.id, kind, pick.value) },
      kind === "transfer" ? "Передать" : "Назначить",
    ),
  );
}

function messageNode(m) {
  if (m.role === "operator") return operatorBubble(m.text, m.meta?.author);
  if (m.meta?.botDraft)
    return el(
      "div",
      { class: "col" },
      el("div", { class: "msg assistant", title: fmtTime(m.createdAt) }, m.text),
      el(
        "div",
        { class: "muted small", dataset: { field: "bot-draft" } },
        `Черновик бота (не отправлен): ${m.meta.botDraft}`,
      ),
    );
  return el(
    "div",
    {
      class: `msg ${m.role === "user" ? "user" : m.role === "assistant" ? "assistant" : "system"}`,
      title: fmtTime(m.createdAt),
    },
    m.text,
  );
}

/** The selected thread's live events: new patient messages, operator messages, hand-backs from another tab. */
function followSelected(c) {
  stopFollowing?.();
  stopFollowing = null;
  if (c.system !== "clinic") return;
  stopFollowing = followThread(
    c.id,
    (e) => {
      // Typing is shown from the desk's presence stream (inbox-desk.js), not from the patient's stream.
      if (selected !== c.id || e.event === "operator.typing") return;
      const transcript = $("#transcript");
      if (e.event === "operator.message") transcript?.append(operatorBubble(e.data.text, e.data.operator));
      else if (e.event === "patient.message") {
        transcript?.append(
          el("div", { class: "msg user" }, e.data.text),
          el("div", { class: "msg assistant" }, e.data.reply),
        );
      } else {
        // Taken, released or closed — maybe by this page's own button, which re-rendered already:
        // re-render only when what is shown is out of date (a button must not move under a click).
        api(`/v1/inbox/conversations/${c.id}`).then(
          (now) => selected === c.id && handlingOf(now) !== shownHandling && select(c.id),
          () => {},
        );
        return;
      }
      // Only the transcript scrolls: the page keeps the composer and the buttons where they are.
      if (transcript) transcript.scrollTop = transcript.scrollHeight;
    },
    { after: c.lastEventSeq ?? 0 },
  );
}

/** Who handles the conversation, as the detail shows it. */
const handlingOf = (c) => `${c.status}|${c.escalated}|${c.takenBy ?? ""}|${c.assignedTo ?? ""}`;
let shownHandling = null;
// Selects overlap (a button's own re-render and the event stream's): only the latest one draws,
// so a slow answer read before a close can never paint the closed thread open again.
let selectRequest = 0;

async function select(id) {
  const mine = ++selectRequest;
  selected = id;
  location.hash = `id=${id}`;
  for (const n of document.querySelectorAll(".inbox-item")) n.classList.toggle("on", n.dataset.id === id);
  try {
    const c = await api(`/v1/inbox/conversations/${id}`);
    if (mine !== selectRequest) return;
    const buttons = [
      operable(c) && c.status !== "taken"
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
      handOverControl(c),
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
        el("div", {}, "Назначен"),
        el("div", { dataset: { field: "assignee" } }, c.assignedTo ?? "никому"),
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
      el("div", { class: "presence-line small", id: "presence", dataset: { id } }),
      el(
        "div",
        { class: "transcript", id: "transcript" },
        c.messages.length ? c.messages.map(messageNode) : el("div", { class: "muted" }, "Сообщений нет."),
      ),
      c.status === "taken"
        ? composer(id)
        : operable(c)
          ? el("div", { class: "muted small", id: "composer-hint" }, "Чтобы ответить пациенту, возьмите диалог.")
          : null,
      notesPanel(id, operatorName),
    );
    watching = watchThread(id, operatorName);
    decorate(operatorName());
    $("#transcript").scrollTop = $("#transcript").scrollHeight;
    // A phone shows the list above the conversation: the opened one comes up to the screen's top.
    if (matchMedia("(max-width: 760px)").matches) $("#detail").scrollIntoView({ block: "start" });
    shownHandling = handlingOf(c);
    followSelected(c);
  } catch (e) {
    if (mine !== selectRequest) return;
    $("#detail").replaceChildren(el("div", { class: "error-box" }, `Не удалось открыть диалог: ${errorText(e)}`));
  }
}

$("#filters").addEventListener("submit", (ev) => {
  ev.preventDefault();
  loadList();
});
for (const id of ["system", "status", "assigned", "escalated"])
  $(`#${id}`).addEventListener("change", () => loadList());
$("#q").addEventListener("input", () => {
  clearTimeout(window.__inboxSearch);
  window.__inboxSearch = setTimeout(() => loadList(), 250);
});
$("#refresh").addEventListener("click", () => loadList().then(() => selected && select(selected)));
$("#more").addEventListener("click", () => loadList(true));

// The desk stream (below) brings changes at once; this poll is the fallback while it reconnects.
setInterval(() => {
  if (!document.hidden && extraPages === 0) loadList();
}, 10_000);

$("#operator-name").value = localStorage.getItem("operatorName") ?? "";
$("#operator-name").addEventListener("change", (ev) => localStorage.setItem("operatorName", ev.target.value.trim()));

(async () => {
  try {
    ({ me, operators: colleagues } = await api("/v1/inbox/operators"));
  } catch {
    /* an older server: names as typed */
  }
  // A token bound to a person: the server names the author; «мои» needs one.
  if (me) $(".operator-name").replaceChildren(el("span", {}, `Вы: ${me}`));
  else $("#assigned").querySelector('option[value="me"]').disabled = true;
  // A thread that changed hands anywhere (a new escalation, a colleague's transfer to me, a take
  // elsewhere): the list is drawn again at once, not at the next 10 s poll; a burst costs one reload.
  let relist = null;
  followDesk(() => me ?? operatorName(), {
    onHandling: () => {
      clearTimeout(relist);
      relist = setTimeout(() => extraPages === 0 && loadList(), 150);
    },
  });
  await loadList();
  if (selected) await select(selected);
  document.body.dataset.ready = "true";
})();
