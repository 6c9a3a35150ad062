// Shared by every operator page: header and nav, the JSON API client, the SSE reader, small DOM helpers.
import { mountDiagram } from "./diagram-view.js";

// The header's links: a subset of the server's list of pages (http/pages.ts: banner, README), names
// as there; a test keeps them in step.
const PAGES = [
  ["/", "Отладка"],
  ["/sandbox.html", "Песочница"],
  ["/inbox.html", "Обращения"],
  ["/settings.html", "Настройки"],
  ["/workbench.html", "Workbench"],
  ["/machines.html", "Схемы"],
  ["/api.html", "API"],
  ["/docs.html", "Документация"],
];

/** `el("div", {class: "x", onclick}, child, "text")` — children may be nodes, strings, arrays or null. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k in node && k !== "list" && typeof v !== "string") node[k] = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity))
    if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : String(c));
  return node;
}

export const $ = (sel, root = document) => root.querySelector(sel);

export function token() {
  return localStorage.getItem("apiToken") ?? "";
}

export function renderHeader(active, title = "Chat Agent for Patients") {
  const input = el("input", { type: "password", placeholder: "не задан", value: token(), "aria-label": "Токен API" });
  input.addEventListener("change", () => {
    localStorage.setItem("apiToken", input.value.trim());
    toast("Токен сохранён в этом браузере");
    // A page that stopped on a missing token loads again with it.
    if (input.classList.contains("needs-token") && input.value.trim()) location.reload();
  });
  const header = el(
    "header",
    { class: "top" },
    el("h1", {}, title),
    el(
      "nav",
      { class: "nav" },
      PAGES.map(([href, name]) => el("a", { href, class: `nav-link${href === active ? " active" : ""}` }, name)),
    ),
    el("div", { class: "spacer" }),
    el("label", { class: "token" }, "Токен", input),
  );
  document.body.prepend(header);
  // Its height (it wraps on a phone) for the CSS that fits a chat between it and the screen's foot.
  const measure = () => document.documentElement.style.setProperty("--header-h", `${header.offsetHeight}px`);
  new ResizeObserver(measure).observe(header);
  measure();
}

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/**
 * Each conversation's own credential (X-Conversation-Token, doc/api.md), kept in this browser from
 * the conversation's creation: a `chat` token reaches a conversation only with it (operator and
 * admin tokens need none, and the server ignores it for them).
 */
const CREDENTIALS = "conversationTokens";
const credentials = () => JSON.parse(localStorage.getItem(CREDENTIALS) ?? "{}");
export function conversationToken(id) {
  return id ? (credentials()[id] ?? null) : null;
}
function rememberConversation(json) {
  const id = json?.threadId ?? json?.conversationId;
  if (!id || typeof json?.conversationToken !== "string") return;
  localStorage.setItem(CREDENTIALS, JSON.stringify({ ...credentials(), [id]: json.conversationToken }));
}
/** The conversation a path names (its credential goes with the request); runs and interactions name theirs by `conversation`. */
const conversationOf = (path) =>
  /^\/v1\/(?:clinic\/threads|workbench\/conversations|evidence\/conversations)\/([^/?]+)/.exec(path)?.[1];

function headers(extra = {}, conversation = null) {
  const h = { ...extra };
  if (token()) h.authorization = `Bearer ${token()}`;
  const credential = conversationToken(conversation);
  if (credential) h["x-conversation-token"] = credential;
  return h;
}

/**
 * JSON API call; an error answer becomes an ApiError with the contract's code and message.
 * `conversation`: the conversation a run's or interaction's path belongs to (for its credential).
 */
export async function api(path, { method = "GET", body, headers: extra = {}, conversation } = {}) {
  const res = await fetch(path, {
    method,
    headers: headers(
      { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...extra },
      conversation ?? conversationOf(path),
    ),
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  if (res.status === 204) return null;
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const e = json?.error ?? {};
    if (res.status === 401) pointToToken();
    throw new ApiError(res.status, e.code ?? "internal", e.message ?? `HTTP ${res.status}`, e.details);
  }
  // A created conversation's credential, for this browser's later requests about it.
  if (res.status === 201) rememberConversation(json);
  return json;
}

/**
 * The one SSE reader of the pages: the events of one response body, calling onEvent({event, id, data})
 * for each. A server-sent `event: error` always carries JSON data `{code, message}`; the browser's
 * own connection error (EventSource `onerror`) never reaches here — a dropped fetch throws instead.
 */
export async function readEvents(res, onEvent) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const dispatch = (block) => {
    let event = "message";
    let id;
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "id") id = value;
      else if (field === "data") data.push(value);
    }
    if (!data.length) return;
    let parsed = data.join("\n");
    try {
      parsed = JSON.parse(parsed);
    } catch {
      /* keep text */
    }
    onEvent({ event, id, data: parsed });
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      dispatch(buf.slice(0, cut));
      buf = buf.slice(cut + 2);
    }
  }
  if (buf.trim()) dispatch(buf);
}

async function errorOf(res) {
  const json = await res.json().catch(() => null);
  const e = json?.error ?? {};
  return new ApiError(res.status, e.code ?? "internal", e.message ?? `HTTP ${res.status}`, e.details);
}

/**
 * POSTs and reads the answer as Server-Sent Events (fetch, not EventSource: the body is JSON
 * and the token goes in a header). Calls onEvent({event, id, data}) for each event once, in
 * order; resolves after `done`. The send carries an Idempotency-Key; if the connection drops,
 * it resumes at /v1/runs/{X-Run-Id}/events with Last-Event-ID (or re-sends the POST with the same
 * key when the run id never arrived) — the server never runs the message twice (doc/clients.md).
 */
export async function streamPost(path, body, onEvent, { signal } = {}) {
  const key = crypto.randomUUID();
  const conversation = conversationOf(path);
  let runId = null;
  let last = 0;
  for (let failures = 0; ;) {
    const resume = last > 0 ? { "last-event-id": String(last) } : {};
    let res;
    try {
      res = runId
        ? await fetch(`/v1/runs/${encodeURIComponent(runId)}/events`, {
            headers: headers({ accept: "text/event-stream", ...resume }, conversation),
            signal,
          })
        : await fetch(path, {
            method: "POST",
            headers: headers(
              {
                "content-type": "application/json",
                accept: "text/event-stream",
                "idempotency-key": key,
                ...resume,
              },
              conversation,
            ),
            body: JSON.stringify(body),
            signal,
          });
    } catch (e) {
      // Stopped by the user (the Stop button): no retry.
      if (signal?.aborted || ++failures > 5) throw e;
      await new Promise((r) => setTimeout(r, 200 * 2 ** failures));
      continue;
    }
    if (res.status === 204) return;
    if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) throw await errorOf(res);
    runId ??= res.headers.get("x-run-id");
    let finished = false;
    try {
      await readEvents(res, (e) => {
        const id = Number(e.id);
        if (Number.isInteger(id) && id <= last) return; // replayed: delivered already
        if (Number.isInteger(id)) last = id;
        failures = 0;
        if (e.event === "done") finished = true;
        onEvent(e);
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      /* dropped: resume below */
    }
    if (finished) return;
    if (++failures > 5)
      throw new ApiError(0, "internal", "Соединение с сервером прерывается; ответ не получен полностью.");
    await new Promise((r) => setTimeout(r, 200 * 2 ** failures));
  }
}

let toastTimer;
export function toast(text) {
  let t = $(".toast");
  if (!t) document.body.append((t = el("div", { class: "toast" })));
  t.textContent = text;
  t.classList.add("on");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove("on"), 2200);
}

export const TOKEN_HINT =
  "Нужен токен API: введите его в поле «Токен» вверху страницы и нажмите Enter — страница загрузится заново.";

/** Without a (valid) token: say where it goes and point at the field itself. */
export function pointToToken() {
  const input = document.querySelector("header.top .token input");
  if (!input) return;
  input.classList.add("needs-token");
  input.placeholder = "вставьте токен сюда";
  if (document.activeElement === document.body || !document.activeElement) input.focus();
}

export function errorText(e) {
  if (e instanceof ApiError && e.status === 401) return TOKEN_HINT;
  return e instanceof ApiError ? `${e.message} (${e.code})` : String(e?.message ?? e);
}

/** Loads a machine diagram (SVG drawn by the server from the machine) into a container. */
export async function loadDiagram(container, machineId, conversationId) {
  const q = conversationId ? `?conversationId=${encodeURIComponent(conversationId)}` : "";
  const res = await fetch(`/v1/machines/${encodeURIComponent(machineId)}/diagram${q}`, { headers: headers() });
  if (!res.ok) {
    const json = await res.json().catch(() => null);
    if (res.status === 401) pointToToken();
    container.replaceChildren(
      el(
        "div",
        { class: "error-box" },
        res.status === 401 ? TOKEN_HINT : (json?.error?.message ?? `HTTP ${res.status}`),
      ),
    );
    return;
  }
  // The SVG is generated by our server from the machine definition (labels XML-escaped there).
  container.innerHTML = await res.text();
  // Drawn whole into its box, zoomed and moved there (diagram-view.js): the box never scrolls sideways.
  const svg = container.querySelector("svg");
  if (svg) mountDiagram(container, svg);
}

export function json(value) {
  return JSON.stringify(value, null, 2);
}

export function fmtTime(s) {
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleString("ru-RU");
}

/** The chat composer of Песочница and Workbench: Enter sends, Shift+Enter is a new line. */
export function wireComposer(send) {
  $("#composer").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const t = $("#text").value;
    $("#text").value = "";
    send(t);
  });
  $("#text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) {
      ev.preventDefault();
      $("#composer").requestSubmit();
    }
  });
}
