// Настройки → «Демо-данные»: the demo knowledge base a fresh install loads (ids demo-…), listed with
// one button that removes it (DELETE /v1/clinic/kb/demo) and one that loads it again.
import { $, api, el, errorText, toast } from "./common.js";

const DEMO = "demo-";

export async function renderDemoSection(root = $("#demo-kb")) {
  if (!root) return;
  let docs = [];
  try {
    docs = (await api("/v1/clinic/kb/documents")).documents.filter((d) => d.id.startsWith(DEMO));
  } catch (e) {
    root.replaceChildren(el("div", { class: "small muted" }, errorText(e)));
    return;
  }
  const act = (method, done) => async () => {
    try {
      const r = await api("/v1/clinic/kb/demo", { method });
      toast(done(r.documents));
      await renderDemoSection(root);
    } catch (e) {
      toast(errorText(e));
    }
  };
  root.replaceChildren(
    el("h2", {}, "Демо-данные"),
    docs.length
      ? el(
          "div",
          {},
          el(
            "p",
            { class: "small muted" },
            "В базе знаний клиники — демонстрационные документы (адрес, часы, цены вымышленной клиники), загруженные при первом запуске. Удалите их, когда загрузите свои.",
          ),
          ...docs.map((d) => el("div", { class: "small mono" }, `${d.id} — ${d.title}`)),
          el(
            "button",
            { id: "demo-remove", onclick: act("DELETE", (n) => `Удалено демо-документов: ${n}`) },
            "Удалить демо-данные",
          ),
        )
      : el(
          "div",
          {},
          el("p", { class: "small muted" }, "Демо-документов в базе знаний нет."),
          el(
            "button",
            { id: "demo-load", onclick: act("POST", (n) => `Загружено демо-документов: ${n}`) },
            "Загрузить демо-данные",
          ),
        ),
  );
}
