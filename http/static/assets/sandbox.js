// Песочница: a patient chat over POST /v1/clinic/threads/{id}/messages (SSE), with the thread state beside it.
import { $, api, el, errorText, loadDiagram, renderHeader, streamPost, wireComposer } from "./common.js";
import { debugDetails, replyBadges, stateCard } from "./clinic-ui.js";
import { failTurn, russianMessage, showReply, startTurn } from "./turn-ui.js";
import { followThread, operatorBubble, showTyping, threadNote } from "./thread-events.js";

renderHeader("/sandbox.html");

let threadId = new URLSearchParams(location.hash.slice(1)).get("thread");
let stepGraphs = [];
let diagramId = "clinic-dialogue";
let busy = false;

const messages = $("#messages");
const scroll = () => (messages.scrollTop = messages.scrollHeight);

// The thread's live events: an operator's answer appears without a reload, as the patient would see it.
let stopFollowing = null;
function follow(after) {
  stopFollowing?.();
  stopFollowing = threadId ? followThread(threadId, onThreadEvent, { after }) : null;
}
function onThreadEvent(e) {
  if (e.event === "operator.typing") return void (showTyping(messages, e.data), scroll());
  if (e.event === "operator.message") {
    showTyping(messages, null);
    messages.append(operatorBubble(e.data.text, e.data.operator));
  } else {
    const note = threadNote(e);
    if (note) messages.append(el("div", { class: "msg note", dataset: { note: e.event } }, note));
    if (e.event !== "patient.message")
      api(`/v1/clinic/threads/${threadId}`).then(
        (t) => showState(t.state, []),
        () => {},
      );
  }
  scroll();
}

function setThread(id) {
  if (id !== threadId) (stopFollowing?.(), (stopFollowing = null));
  threadId = id;
  location.hash = id ? `thread=${id}` : "";
  $("#thread-id").textContent = id ? `· ${id.slice(0, 8)}` : "";
}

function userBubble(text) {
  messages.append(el("div", { class: "msg user", dataset: { role: "user" } }, text));
  scroll();
}

function assistantBubble() {
  const text = el("div", { class: "text" });
  const meta = el("div", { class: "meta" });
  const node = el("div", { class: "msg assistant", dataset: { role: "assistant" } }, text, meta);
  messages.append(node);
  scroll();
  return { node, text, meta };
}

function showState(state, events) {
  $("#state").replaceChildren(stateCard(state, events, stepGraphs));
}

async function refreshDiagram() {
  await loadDiagram($("#diagram"), diagramId, threadId);
}

// The thread's dialogue snapshot rebuilt from its event log by the server (GET …/replay): the
// turn is reproducible from what was logged, or the page says where it is not.
async function refreshReplay() {
  const box = $("#replay");
  if (!threadId) return box.replaceChildren(el("span", { class: "muted" }, "Диалог ещё не начат."));
  try {
    const { machines } = await api(`/v1/conversations/${threadId}/replay`);
    const m = machines.find((x) => x.key === threadId);
    if (!m) return box.replaceChildren(el("span", { class: "muted" }, "Ходов ещё не было."));
    const definitions =
      m.definitions.length === 1
        ? "одно определение машины"
        : `определений машины: ${m.definitions.length} (настройки менялись)`;
    box.replaceChildren(
      m.matches
        ? el(
            "div",
            { dataset: { replay: "matches" } },
            el("span", { class: "badge ok" }, "совпадает"),
            ` Снимок диалога заново собран из журнала: ${m.events} событий, ${definitions}.`,
          )
        : el(
            "div",
            { class: "error-box", dataset: { replay: "differs" } },
            m.replayed ? "Снимок не совпадает с тем, что даёт журнал событий." : `Не воспроизвести: ${m.reason}`,
          ),
    );
  } catch (e) {
    box.replaceChildren(el("div", { class: "error-box" }, errorText(e)));
  }
}

async function loadTabs() {
  const { machines } = await api("/v1/machines");
  const tabs = machines.filter((m) => m.conversationKind === "clinic");
  diagramId = tabs.find((m) => m.id.startsWith("steps-"))?.id ?? "clinic-dialogue";
  const render = () =>
    $("#diagram-tabs").replaceChildren(
      ...tabs.map((m) =>
        el(
          "button",
          {
            type: "button",
            class: m.id === diagramId ? "on" : "",
            onclick: () => ((diagramId = m.id), render(), refreshDiagram()),
          },
          m.title,
        ),
      ),
    );
  render();
}

async function loadThread() {
  if (!threadId) return;
  try {
    const t = await api(`/v1/clinic/threads/${threadId}`);
    setThread(t.threadId);
    messages.replaceChildren();
    let last = [];
    const debug = [];
    for (const m of t.messages) {
      if (m.role === "user") userBubble(m.text);
      else if (m.role === "operator") messages.append(operatorBubble(m.text, m.meta?.author));
      else if (m.role === "assistant") {
        const b = assistantBubble();
        b.text.textContent = m.text;
        const state = {
          activeBranch: m.meta?.activeBranch,
          routerDecision: m.meta?.routerDecision,
          step: m.meta?.step,
          escalationReason: m.meta?.escalationReason,
        };
        b.meta.append(replyBadges({ state, events: m.meta?.events, notes: m.meta?.notes }));
        last = m.meta?.events ?? [];
        if (m.meta?.runId) debug.push({ b, runId: m.meta.runId });
      }
    }
    // Past turns' debug data (RAG fragments, assembled prompt) from their stored runs.
    const loaded = await Promise.all(
      debug.map(({ runId }) =>
        api(`/v1/runs/${runId}/stages`, { conversation: threadId }).then(
          (r) => r.stages,
          () => [],
        ),
      ),
    );
    loaded.forEach((stages, i) => debug[i].b.meta.append(...debugDetails(stages)));
    const lastStages = loaded.at(-1) ?? [];
    const details = debugDetails(lastStages);
    if (details.length) $("#last-debug").replaceChildren(...details.map((d) => ((d.open = true), d)));
    showState(t.state, last);
    // What is already shown came with the thread; live events from the log's current end.
    follow(t.lastEventSeq ?? 0);
    requestAnimationFrame(scroll);
  } catch (e) {
    messages.append(el("div", { class: "error-box" }, `Не удалось загрузить диалог: ${errorText(e)}`));
    setThread(null);
  }
}

async function send(text) {
  if (busy || !text.trim()) return;
  busy = true;
  $("#send").disabled = true;
  const turn = startTurn();
  let b = null;
  try {
    if (!threadId) {
      setThread((await api("/v1/clinic/threads", { method: "POST" })).threadId);
      follow(0);
    }
    userBubble(text);
    b = assistantBubble();
    b.node.classList.add("streaming");
    const stages = [];
    let streamed = "";
    let failed = null;
    await streamPost(
      `/v1/clinic/threads/${threadId}/messages`,
      { text, debug: true },
      ({ event, data }) => {
        if (event === "token") {
          streamed += data.delta;
          b.text.textContent = streamed;
          scroll();
        } else if (event === "router_decision") {
          b.meta.replaceChildren(el("span", { class: "badge" }, `маршрутизатор: ${data.intent}…`));
        } else if (event === "stage") {
          stages.push(data);
        } else if (event === "final") {
          b.text.textContent = data.reply;
          b.meta.replaceChildren(replyBadges(data), ...debugDetails(stages));
          showState(data.state, data.events);
          const details = debugDetails(stages);
          $("#last-debug").replaceChildren(
            ...(details.length
              ? details.map((d) => ((d.open = true), d))
              : [el("span", { class: "muted" }, "В этом ходе ни фрагментов, ни вызова ветки.")]),
          );
        } else if (event === "error") {
          failed = data;
        }
      },
      { signal: turn.signal },
    );
    // The turn was not stored: its text goes back to the composer.
    if (failed) {
      failTurn(b.node, b.text, russianMessage(failed), text, failed.code);
      b.node.dataset.done = "true";
    } else {
      b.node.classList.remove("streaming");
      b.node.dataset.done = "true";
    }
  } catch (e) {
    if (b) failTurn(b.node, b.text, russianMessage(e), text, e?.name === "AbortError" ? undefined : e?.code);
    else {
      messages.append(el("div", { class: "error-box", dataset: { error: "turn" } }, russianMessage(e)));
      if (!$("#text").value.trim()) $("#text").value = text;
    }
  } finally {
    turn.end();
    busy = false;
    $("#send").disabled = false;
    showReply(messages, b?.node);
    refreshDiagram();
    refreshReplay();
  }
}

wireComposer(send);
$("#new-thread").addEventListener("click", () => {
  setThread(null);
  messages.replaceChildren(el("div", { class: "msg system" }, "Новый диалог: первое сообщение создаст тред."));
  showState(null, []);
  $("#last-debug").replaceChildren(el("span", { class: "muted" }, "Появится после первого ответа."));
  refreshDiagram();
  refreshReplay();
});

(async () => {
  try {
    stepGraphs = (await api("/v1/clinic/branches")).stepGraphs ?? [];
    await loadTabs();
  } catch (e) {
    $("#diagram").replaceChildren(el("div", { class: "error-box" }, errorText(e)));
  }
  if (threadId) await loadThread();
  else
    messages.append(
      el("div", { class: "msg system" }, "Напишите сообщение от лица пациента — первый ответ создаст диалог."),
    );
  refreshReplay();
  refreshDiagram();
  document.body.dataset.ready = "true";
})();
