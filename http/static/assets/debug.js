// Отладка: the knowledge base (upload, re-index, chunks, search) and a single question without dialogue memory.
import { $, api, el, errorText, fmtTime, renderHeader, streamPost, toast } from "./common.js";
import { debugDetails, replyBadges } from "./clinic-ui.js";

renderHeader("/");

// The branch codes come from the active settings, so a branch added in Настройки is offered here too.
async function loadBranches() {
  const { branches } = await api("/v1/clinic/branches");
  for (const sel of document.querySelectorAll("select[name=branch]"))
    for (const b of branches) sel.append(el("option", { value: b.code }, b.title ? `${b.code} — ${b.title}` : b.code));
}
loadBranches().catch((e) => toast(errorText(e)));

async function loadDocs() {
  const { documents } = await api("/v1/clinic/kb/documents");
  if (!documents.length) {
    $("#docs").replaceChildren(el("div", { class: "muted" }, "База пуста: загрузите документ ниже."));
    return;
  }
  $("#docs").replaceChildren(
    el(
      "table",
      {},
      el(
        "tr",
        {},
        el("th", {}, "Документ"),
        el("th", {}, "Ветка"),
        el("th", {}, "Версия"),
        el("th", {}, "Фрагм."),
        el("th", {}, "Изменён"),
        el("th", {}, ""),
      ),
      documents.map((d) =>
        el(
          "tr",
          { dataset: { doc: d.id } },
          el("td", {}, el("b", {}, d.title), el("div", { class: "small muted mono" }, d.id)),
          el("td", { class: "small" }, d.branch ?? "любая"),
          el("td", {}, `v${d.version}`),
          el("td", {}, String(d.chunkCount)),
          el("td", { class: "small" }, fmtTime(d.updatedAt)),
          el(
            "td",
            { class: "row" },
            el("button", { class: "secondary", type: "button", onclick: () => showChunks(d) }, "Фрагменты"),
            el("button", { class: "secondary", type: "button", onclick: () => reindex(d) }, "Переразметить"),
            el("button", { class: "danger", type: "button", onclick: () => remove(d) }, "Удалить"),
          ),
        ),
      ),
    ),
  );
}

async function showChunks(d) {
  const { chunks, version } = await api(`/v1/clinic/kb/documents/${encodeURIComponent(d.id)}/chunks`);
  $("#chunks-panel").hidden = false;
  $("#chunks-title").textContent = `· ${d.title} v${version} · ${chunks.length}`;
  $("#chunks").replaceChildren(
    ...chunks.map((c) =>
      el(
        "div",
        { dataset: { chunk: c.ord } },
        el("div", { class: "small" }, el("b", {}, `#${c.ord}`), ` ${c.heading}`),
        el("pre", {}, c.text),
      ),
    ),
  );
}

async function reindex(d) {
  const r = await api(`/v1/clinic/kb/documents/${encodeURIComponent(d.id)}/reindex`, { method: "POST" });
  toast(`${d.title}: ${r.chunks} фрагм.`);
  await loadDocs();
  await showChunks(d);
}

async function remove(d) {
  if (!confirm(`Удалить «${d.title}»?`)) return;
  await api(`/v1/clinic/kb/documents/${encodeURIComponent(d.id)}`, { method: "DELETE" });
  $("#chunks-panel").hidden = true;
  await loadDocs();
}

$("#reindex-all").addEventListener("click", async () => {
  const r = await api("/v1/clinic/kb/reindex", { method: "POST" });
  toast(`Переразмечено: ${r.documents} док., ${r.chunks} фрагм.`);
  await loadDocs();
});

const form = $("#upload");
form.file.addEventListener("change", async () => {
  const file = form.file.files[0];
  if (!file) return;
  form.text.value = await file.text();
  if (!form.title.value) form.title.value = file.name.replace(/\.(md|txt)$/i, "");
});
form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("#upload-error").textContent = "";
  try {
    const r = await api("/v1/clinic/kb/documents", {
      method: "POST",
      body: { title: form.title.value, text: form.text.value, branch: form.branch.value || null },
    });
    toast(`Загружено: ${r.documentId} v${r.version}, ${r.chunks} фрагм.`);
    form.reset();
    await loadDocs();
    await showChunks({ id: r.documentId, title: r.documentId });
  } catch (e) {
    $("#upload-error").textContent = errorText(e);
  }
});

$("#ask").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const q = ev.target.q.value.trim();
  if (!q) return;
  const out = $("#answer");
  const text = el("div", { class: "msg assistant streaming" });
  const meta = el("div");
  out.replaceChildren(el("div", { class: "msg user", style: "margin:8px 0 8px auto" }, q), text, meta);
  const stages = [];
  let streamed = "";
  try {
    // A fresh thread per question: the same pipeline as the chat, with no history to lean on.
    const { threadId } = await api("/v1/clinic/threads", { method: "POST" });
    await streamPost(`/v1/clinic/threads/${threadId}/messages`, { text: q, debug: true }, ({ event, data }) => {
      if (event === "token") text.textContent = streamed += data.delta;
      else if (event === "stage") stages.push(data);
      else if (event === "final") {
        text.textContent = data.reply;
        meta.replaceChildren(replyBadges(data), ...debugDetails(stages).map((d) => ((d.open = true), d)));
      } else if (event === "error") meta.append(el("div", { class: "error-box" }, `${data.message} (${data.code})`));
    });
  } catch (e) {
    meta.append(el("div", { class: "error-box" }, errorText(e)));
  }
  text.classList.remove("streaming");
  text.dataset.done = "true";
});

$("#search").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = ev.target;
  try {
    const p = new URLSearchParams({ q: f.q.value });
    if (f.branch.value) p.set("branch", f.branch.value);
    const { fragments } = await api(`/v1/clinic/kb/search?${p}`);
    $("#hits").replaceChildren(
      ...(fragments.length
        ? fragments.map((h) =>
            el(
              "div",
              {},
              el(
                "div",
                { class: "small" },
                el("b", {}, `${h.docId} · ${h.heading}`),
                el("span", { class: "muted" }, ` · ${h.score.toFixed(3)}`),
              ),
              el("pre", {}, h.text),
            ),
          )
        : [el("div", { class: "muted" }, "Ничего не нашлось.")]),
    );
  } catch (e) {
    $("#hits").replaceChildren(el("div", { class: "error-box" }, errorText(e)));
  }
});

loadDocs()
  .catch((e) => $("#docs").replaceChildren(el("div", { class: "error-box" }, errorText(e))))
  .finally(() => (document.body.dataset.ready = "true"));
