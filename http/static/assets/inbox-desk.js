// The operator's desk beside the inbox (issue 43): who has a thread open or types in it (presence,
// ephemeral: a heartbeat every few seconds), reminders (an escalation waiting too long, a held
// thread gone silent), internal notes (operators only) and quick replies in the composer.
import { $, api, el, errorText, fmtTime, readEvents, toast, token } from "./common.js";

/** Heartbeats well inside the server's PRESENCE_TTL_MS (8 s by default). */
const BEAT_MS = 2_500;
/** A pause in typing this long ends «печатает». */
const TYPING_IDLE_MS = 3_000;

const presence = new Map(); // conversationId → {viewing, typing}
let reminders = [];
let onNoteFor = null;

/** «Мария печатает» / «открыто у Ивана» for one thread, as seen by `me` (their own signal left out). */
export function presenceText(id, me) {
  const p = presence.get(id);
  if (!p) return "";
  const typing = p.typing.filter((n) => n !== me);
  const viewing = p.viewing.filter((n) => n !== me && !typing.includes(n));
  const parts = [];
  if (typing.length) parts.push(`${typing.join(", ")} ${typing.length > 1 ? "печатают" : "печатает"}`);
  if (viewing.length) parts.push(`открыто у ${viewing.map((n) => p.genitive?.[n] ?? n).join(", ")}`);
  return parts.join(" · ");
}

const reminderText = (r) =>
  r.kind === "untaken"
    ? `напоминание: ждёт с ${fmtTime(r.since)}`
    : r.requeued
      ? `напоминание: ${r.operator ?? "оператор"} молчал — снова в очереди`
      : `напоминание: тишина с ${fmtTime(r.since)}`;

/** Puts the presence and reminder badges on the list's rows and the open thread's line. */
export function decorate(me) {
  for (const node of document.querySelectorAll(".inbox-item")) {
    const id = node.dataset.id;
    const row = node.querySelector(".row");
    node.querySelector('[data-badge="presence"]')?.remove();
    node.querySelector('[data-badge="reminder"]')?.remove();
    const text = presenceText(id, me);
    if (text) row?.append(el("span", { class: "badge presence", dataset: { badge: "presence" } }, text));
    const r = reminders.find((x) => x.conversationId === id);
    if (r) row?.append(el("span", { class: "badge warn", dataset: { badge: "reminder" } }, reminderText(r)));
  }
  const line = $("#presence");
  if (line) line.textContent = presenceText(line.dataset.id, me);
  const count = $("#reminders-count");
  if (count) {
    count.textContent = reminders.length ? `напоминаний: ${reminders.length}` : "";
    count.hidden = !reminders.length;
  }
}

export async function loadReminders(me) {
  try {
    reminders = (await api("/v1/inbox/reminders")).items;
  } catch {
    /* the list shows its own error */
  }
  decorate(me);
}

/**
 * Follows GET /v1/inbox/presence (fetch, so the token goes in a header); reconnects with a pause.
 * `onHandling` hears that a thread changed hands (taken, released, closed, assigned, transferred).
 */
export function followDesk(me, { onHandling } = {}) {
  (async () => {
    for (let failures = 0; ; failures++) {
      try {
        const headers = { accept: "text/event-stream" };
        if (token()) headers.authorization = `Bearer ${token()}`;
        const res = await fetch("/v1/inbox/presence", { headers });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        failures = 0;
        await readEvents(res, (e) => {
          if (e.event === "presence.snapshot") {
            presence.clear();
            for (const p of e.data.items) presence.set(p.conversationId, p);
          } else if (e.event === "presence") presence.set(e.data.conversationId, e.data);
          else if (e.event === "reminder") return void loadReminders(me());
          else if (e.event === "note") return void onNoteFor?.(e.data);
          else if (e.event === "handling") return void onHandling?.(e.data);
          decorate(me());
        });
      } catch {
        /* reconnect below */
      }
      await new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** failures)));
    }
  })();
}

let beating = null;
/** While a thread is open: «viewing» every few seconds, «typing» while its composer is typed in. */
export function watchThread(id, me) {
  // The same thread re-rendered: its heartbeat goes on (a «left» in between would flicker for colleagues).
  if (beating?.id === id) return beating;
  stopWatching();
  const state = { id, typingUntil: 0 };
  const send = (s) =>
    api(`/v1/inbox/conversations/${id}/presence`, { method: "POST", body: { state: s, operator: me() } }).then(
      (p) => {
        presence.set(id, p);
        decorate(me());
      },
      () => {},
    );
  const beat = () => send(Date.now() < state.typingUntil ? "typing" : "viewing");
  beat();
  const timer = setInterval(() => !document.hidden && beat(), BEAT_MS);
  beating = {
    id,
    typed() {
      const wasTyping = Date.now() < state.typingUntil;
      state.typingUntil = Date.now() + TYPING_IDLE_MS;
      if (!wasTyping) send("typing");
    },
    sent() {
      state.typingUntil = 0;
      send("viewing");
    },
    stop() {
      clearInterval(timer);
      send("left");
    },
  };
  return beating;
}
export function stopWatching() {
  beating?.stop();
  beating = null;
}
addEventListener("pagehide", () => stopWatching());

/** Internal notes of a thread: never shown to the patient nor given to the model. */
export function notesPanel(id, me) {
  const list = el("div", { class: "notes-list col", id: "notes-list" });
  const render = (items) =>
    list.replaceChildren(
      ...(items.length
        ? items.map((n) =>
            el(
              "div",
              { class: "note-item", dataset: { note: n.id } },
              el("div", { class: "who small" }, `${n.author} · ${fmtTime(n.createdAt)}`),
              el("div", { class: "text" }, n.text),
            ),
          )
        : [el("div", { class: "muted small" }, "Заметок нет.")]),
    );
  const load = () =>
    api(`/v1/inbox/conversations/${id}/notes`).then(
      (r) => render(r.items),
      (e) => list.replaceChildren(el("div", { class: "error-box" }, errorText(e))),
    );
  const input = el("textarea", {
    id: "note-text",
    placeholder: "Заметка для коллег (пациент её не увидит)",
    "aria-label": "Внутренняя заметка",
  });
  const form = el(
    "form",
    { class: "composer note-composer" },
    input,
    el("button", { id: "note-add", type: "submit", class: "secondary" }, "Добавить заметку"),
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (!input.value.trim()) return;
    try {
      await api(`/v1/inbox/conversations/${id}/notes`, { method: "POST", body: { text: input.value, operator: me() } });
      input.value = "";
      await load();
    } catch (e) {
      toast(errorText(e));
    }
  });
  onNoteFor = (n) => n.conversationId === id && load();
  load();
  return el(
    "details",
    { class: "notes", id: "notes", open: true },
    el("summary", {}, "Внутренние заметки (видят только операторы)"),
    list,
    form,
  );
}

let templates = [];
export async function loadQuickReplies() {
  try {
    templates = (await api("/v1/inbox/quick-replies")).items;
  } catch {
    templates = [];
  }
  return templates;
}

/** Matches a `/filter` against the templates: titles first, then texts. */
export function matchQuickReplies(filter) {
  const f = filter.trim().toLowerCase();
  if (!f) return templates;
  const byTitle = templates.filter((t) => t.title.toLowerCase().includes(f));
  return [...byTitle, ...templates.filter((t) => !byTitle.includes(t) && t.text.toLowerCase().includes(f))];
}

/**
 * Quick replies in the operator's composer: a chip per template (one click inserts it), and `/`
 * at the start of the text opens the templates filtered by what follows; Enter or a click picks.
 */
export function enhanceComposer(form, onTyped) {
  const textarea = form.querySelector("textarea");
  const chips = el("div", { class: "quick-replies row", id: "quick-replies" });
  const menu = el("div", { class: "quick-menu", id: "quick-menu", hidden: true, role: "listbox" });
  const insert = (t) => {
    const v = textarea.value;
    textarea.value = v.startsWith("/") || !v.trim() ? t.text : `${v.replace(/\s+$/, "")} ${t.text}`;
    menu.hidden = true;
    textarea.focus();
    onTyped();
  };
  const renderChips = () =>
    chips.replaceChildren(
      ...templates.map((t) =>
        el(
          "button",
          { type: "button", class: "chip", dataset: { quick: t.title }, title: t.text, onclick: () => insert(t) },
          t.title,
        ),
      ),
    );
  const showMenu = () => {
    const m = /^\/(.*)$/s.exec(textarea.value);
    const found = m ? matchQuickReplies(m[1]).slice(0, 8) : [];
    menu.hidden = !m;
    menu.replaceChildren(
      ...(found.length
        ? found.map((t, i) =>
            el(
              "div",
              {
                class: `quick-option${i === 0 ? " on" : ""}`,
                role: "option",
                dataset: { quick: t.title },
                onmousedown: (ev) => (ev.preventDefault(), insert(t)),
              },
              el("b", {}, t.title),
              " ",
              el("span", { class: "muted" }, t.text),
            ),
          )
        : [
            el(
              "div",
              { class: "muted small" },
              templates.length ? "Нет подходящих шаблонов." : "Шаблонов нет: добавьте их в «Настройках».",
            ),
          ]),
    );
  };
  textarea.addEventListener("input", () => {
    onTyped();
    showMenu();
  });
  // Runs before the composer's own Enter-to-send: with the menu open, Enter picks the first match.
  textarea.addEventListener(
    "keydown",
    (ev) => {
      if (menu.hidden) return;
      if (ev.key === "Escape") menu.hidden = true;
      else if (ev.key === "Enter" && !ev.shiftKey) {
        const first = matchQuickReplies(textarea.value.slice(1))[0];
        if (!first) return;
        ev.preventDefault();
        ev.stopImmediatePropagation();
        insert(first);
      }
    },
    { capture: true },
  );
  loadQuickReplies().then(renderChips);
  form.prepend(chips);
  form.append(menu);
  return form;
}
