// Workbench console: a Configurator-like chat over a workspace snapshot, clarification candidates as
// buttons, and every run's numbered stages (00–12) laid out under its reply.
import { $, api, el, errorText, json, loadDiagram, renderHeader, streamPost, wireComposer } from "./common.js";
import { failTurn, russianMessage, showReply, startTurn } from "./turn-ui.js";

renderHeader("/workbench.html", "Workbench");

let conversationId = new URLSearchParams(location.hash.slice(1)).get("conversation");
let open = null; // the clarification awaiting an answer: {id, interactionId, candidates}
let diagramId = "interaction";
let busy = false;
const messages = $("#messages");
const scroll = () => (messages.scrollTop = messages.scrollHeight);

function setConversation(id) {
  conversationId = id;
  location.hash = id ? `conversation=${id}` : "";
  $("#conv-id").textContent = id ? `· ${id.slice(0, 8)}` : "";
}

function workspace() {
  const raw = $("#workspace").value.trim();
  $("#ws-error").textContent = "";
  if (!raw) return { ok: true, value: undefined };
  try {
    const value = JSON.parse(raw);
    if (!value || typeof value !== "object" || !Array.isArray(value.documents))
      throw new Error("нужен объект с полем documents (массив)");
    $("#ws-info").textContent = `generation ${value.generation ?? "—"} · документов: ${value.documents.length}`;
    return { ok: true, value };
  } catch (e) {
    $("#ws-error").textContent = `Снапшот не разобран: ${e.message}`;
    return { ok: false };
  }
}

function setOpen(q) {
  open = q;
  $("#reply-mode").hidden = !q;
  $("#reply-mode").textContent = q ? `Открыто уточнение ${q.id}: ответ текстом тоже уйдёт как ответ на него.` : "";
}

// One-line digests of the stages the contract names, so the list reads without opening each.
function digest(s) {
  const d = s.data ?? {};
  if (s.status === "skipped") return d.reason ?? "";
  if (s.name === "plan")
    return `v${d.planVersion} · ${d.plannedBy} · ${(d.tasks ?? []).map((t) => `${t.id}:${t.intent}`).join(", ")}`;
  if (s.name === "domain-resolution")
    return (d.tasks ?? [])
      .map((t) => `${t.taskId} «${t.mention}» → ${t.status}${t.resolvedIdentity ? ` ${t.resolvedIdentity}` : ""}`)
      .join("; ");
  if (s.name === "adequacy-context-plan")
    return `${d.passed ? "пройдено" : "не пройдено"}${d.reasons?.length ? ` · ${d.reasons.join(", ")}` : ""}`;
  if (s.name === "documentation") return `фрагментов: ${(d.fragments ?? []).length}`;
  if (s.name === "routing") return d.sourceMode ?? d.route ?? "";
  // Codes only: an issue's detail quotes the rejected text (the full data is in the details).
  if (s.name === "response-validation" && d.ok === false)
    return `не пройдена · ${[...new Set((d.issues ?? []).map((i) => i.code))].join(", ")}${d.replaced ? " · ответ заменён" : ""}`;
  return "";
}

function stagesBlock(stages) {
  const status = { ok: "ok", skipped: "gray", failed: "err" };
  const items = stages.map((s) =>
    el(
      "details",
      { class: "stage", dataset: { stage: s.stageId } },
      el(
        "summary",
        {},
        el("b", { class: "mono" }, s.stageId),
        s.name,
        el("span", { class: `badge ${status[s.status] ?? ""}` }, s.status),
        el("span", { class: "muted small" }, `${s.durationMs} мс`),
        el("span", { class: "muted small mono" }, digest(s)),
      ),
      el("pre", {}, json(s.data)),
    ),
  );
  const toggle = el(
    "button",
    {
      class: "secondary",
      type: "button",
      style: "padding:1px 8px;font-size:11px",
      onclick: () => items.forEach((d) => (d.open = !items[0].open)),
    },
    "раскрыть/свернуть данные",
  );
  // Collapsed: the reply and a clarification's question stay in view; the stages open on demand.
  return el("details", { class: "run-stages" }, el("summary", {}, `Этапы запуска (${stages.length}) `, toggle), items);
}

const cite = (text) =>
  text
    .split(/(\[\[[^\]]+\]\])/g)
    .map((part) =>
      /^\[\[.+\]\]$/.test(part)
        ? el("span", { class: "badge", title: "ссылка на документ рабочего пространства" }, part.slice(2, -2))
        : part,
    );

function candidatesBlock(q) {
  if (!q.candidates.length) return el("div", { class: "muted small" }, "Кандидатов нет — уточните запрос текстом.");
  return el(
    "div",
    { class: "candidates" },
    q.candidates.map((c) =>
      el(
        "button",
        {
          type: "button",
          dataset: { candidate: c.candidateId, identity: c.identity },
          title: c.identity,
          onclick: (ev) => answer(q, c, ev.currentTarget),
        },
        `${c.displayName}`,
        el(
          "span",
          { class: "small", style: "opacity:.7" },
          ` · ${c.documentType}${c.folderName ? ` · ${c.folderName}` : ""}`,
        ),
      ),
    ),
  );
}

async function answer(q, c, button) {
  if (busy || open?.id !== q.id) return;
  button
    .closest(".candidates")
    .querySelectorAll("button")
    .forEach((b) => (b.disabled = true));
  button.classList.add("chosen");
  await send(c.displayName, {
    interactionId: q.interactionId,
    replyToClarificationId: q.id,
    selectedCandidateId: c.candidateId,
  });
}

async function send(text, extra = {}) {
  if (busy || !text.trim()) return;
  const ws = workspace();
  if (!ws.ok) return;
  busy = true;
  $("#send").disabled = true;
  const turn = startTurn();
  let bubble = null;
  let body = null;
  let failed = null;
  try {
    if (!conversationId) setConversation((await api("/v1/workbench/conversations", { method: "POST" })).conversationId);
    if (open && !extra.replyToClarificationId)
      extra = { interactionId: open.interactionId, replyToClarificationId: open.id };
    messages.append(el("div", { class: "msg user", dataset: { role: "user" } }, text));
    bubble = el("div", { class: "msg assistant streaming", dataset: { role: "assistant" } });
    body = el("div", { class: "text" });
    const meta = el("div", { class: "meta" });
    bubble.append(body, meta);
    messages.append(bubble);
    scroll();
    const stages = [];
    let streamed = "";
    let interactionId = extra.interactionId;
    await streamPost(
      `/v1/workbench/conversations/${conversationId}/messages`,
      { text, workspace: ws.value, debug: true, ...extra },
      ({ event, data }) => {
        if (event === "run_started") {
          interactionId = data.interactionId;
          $("#interaction-status").textContent = `${data.interactionId ?? ""} · план v${data.planVersion ?? "?"}`;
        } else if (event === "stage") stages.push(data);
        else if (event === "token") {
          streamed += data.delta;
          body.textContent = streamed;
          scroll();
        } else if (event === "answer_replaced") {
          // doc/streaming.md: every token of this run is discarded; the replacement is shown instead.
          streamed = "";
          body.replaceChildren(...cite(data.text ?? ""));
          bubble.dataset.replaced = "true";
          meta.append(
            el(
              "div",
              { class: "badge err", title: [...new Set((data.issues ?? []).map((i) => i.split(":")[0]))].join(", ") },
              "ответ модели заменён: не прошёл проверку",
            ),
          );
          scroll();
        } else if (event === "clarification_required") {
          bubble.dataset.clarification = data.id;
          body.replaceChildren(el("b", {}, data.question), candidatesBlock(data));
          setOpen(data);
        } else if (event === "final") {
          setOpen(null);
          body.replaceChildren(...cite(data.answer ?? ""));
          meta.append(
            el(
              "div",
              { class: "badges" },
              el("span", { class: "badge gray" }, `статус: ${data.status}`),
              el(
                "span",
                { class: `badge ${data.validation?.ok ? "ok" : "err"}` },
                data.validation?.ok
                  ? "проверка ответа пройдена"
                  : `проверка: ${(data.validation?.issues ?? []).length} замеч.`,
              ),
              el(
                "span",
                { class: "badge gray" },
                `вызовы модели: подготовка ${data.modelCalls?.preparatory ?? 0}, ответ ${data.modelCalls?.final ?? 0}`,
              ),
            ),
          );
        } else if (event === "error") {
          // doc/streaming.md: text streamed before an error is not an answer (none was stored).
          streamed = "";
          failed = data;
        }
      },
      { signal: turn.signal },
    );
    if (stages.length) meta.append(stagesBlock(stages));
    // The turn was not stored: the bubble says why and the typed text goes back to the composer
    // (a candidate's button press has no typed text to give back).
    if (failed) {
      failTurn(bubble, body, russianMessage(failed), extra.selectedCandidateId ? undefined : text, failed.code);
      bubble.dataset.done = "true";
    } else {
      bubble.classList.remove("streaming");
      bubble.dataset.done = "true";
    }
    if (interactionId) {
      const it = await api(`/v1/workbench/interactions/${encodeURIComponent(interactionId)}`, {
        conversation: conversationId,
      }).catch(() => null);
      if (it) {
        $("#interaction-status").textContent = `${it.id.slice(0, 20)}… · ${it.status} · план v${it.planVersion}`;
        $("#interaction-status").dataset.interaction = it.id;
      }
    }
  } catch (e) {
    const typed = extra.selectedCandidateId ? undefined : text;
    if (bubble) failTurn(bubble, body, russianMessage(e), typed, e?.name === "AbortError" ? undefined : e?.code);
    else {
      messages.append(el("div", { class: "error-box", dataset: { error: "turn" } }, russianMessage(e)));
      if (typed && !$("#text").value.trim()) $("#text").value = typed;
    }
    if (e.code === "conflict" || e.code === "unknown_candidate") setOpen(null);
  } finally {
    turn.end();
    busy = false;
    $("#send").disabled = false;
    showReply(messages, bubble);
    refreshDiagram();
  }
}

async function refreshDiagram() {
  await loadDiagram($("#diagram"), diagramId, conversationId);
}

function renderTabs() {
  $("#diagram-tabs").replaceChildren(
    ...[
      ["interaction", "Запрос (Interaction)"],
      ["clarification", "Уточнение"],
    ].map(([id, title]) =>
      el(
        "button",
        {
          type: "button",
          class: id === diagramId ? "on" : "",
          onclick: () => ((diagramId = id), renderTabs(), refreshDiagram()),
        },
        title,
      ),
    ),
  );
}

async function loadConversation() {
  if (!conversationId) return;
  try {
    const c = await api(`/v1/workbench/conversations/${conversationId}`);
    setConversation(c.conversationId);
    for (const m of c.messages)
      messages.append(
        el(
          "div",
          { class: `msg ${m.role === "user" ? "user" : "assistant"}` },
          ...(m.role === "user" ? [m.text] : cite(m.text)),
        ),
      );
    const last = c.interactions.at(-1);
    if (last?.status === "awaiting_clarification") {
      const it = await api(`/v1/workbench/interactions/${encodeURIComponent(last.id)}`, {
        conversation: conversationId,
      });
      const q = it.clarifications.find((x) => x.status === "open");
      if (q) {
        const full = { ...q, interactionId: it.id };
        messages.append(
          el(
            "div",
            { class: "msg assistant", dataset: { clarification: q.id } },
            el("b", {}, q.question),
            candidatesBlock(full),
          ),
        );
        setOpen(full);
      }
    }
  } catch (e) {
    messages.append(el("div", { class: "error-box" }, `Не удалось загрузить диалог: ${errorText(e)}`));
    setConversation(null);
  }
}

wireComposer(send);
$("#new-conv").addEventListener("click", () => {
  setConversation(null);
  setOpen(null);
  messages.replaceChildren(el("div", { class: "msg system" }, "Новый диалог: первое сообщение его создаст."));
  refreshDiagram();
});
$("#ws-file").addEventListener("change", async (ev) => {
  const f = ev.target.files[0];
  if (f) $("#workspace").value = await f.text();
  workspace();
});
$("#workspace").addEventListener("change", () => workspace());
$("#ws-sample").addEventListener("click", async () => {
  try {
    $("#workspace").value = json(await api("/v1/workbench/sample-workspace"));
    workspace();
  } catch (e) {
    $("#ws-error").textContent = errorText(e);
  }
});

renderTabs();
(async () => {
  if (conversationId) await loadConversation();
  else
    messages.append(
      el(
        "div",
        { class: "msg system" },
        "Спросите о документах рабочего пространства или о документации Configurator.",
      ),
    );
  await refreshDiagram();
  document.body.dataset.ready = "true";
})();
