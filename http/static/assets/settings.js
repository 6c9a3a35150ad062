// Настройки: branches and their versions (create, activate, roll back); the steps editor of a stepped branch.
import { $, api, el, errorText, fmtTime, json, renderHeader, toast } from "./common.js";
import { parseGuards } from "./guards.js";
import { renderDemoSection } from "./settings-demo.js";

renderHeader("/settings.html");
void renderDemoSection();

let settings = { branches: [], stepGraphs: [] };
let current = new URLSearchParams(location.hash.slice(1)).get("branch") ?? "new_booking";

const lines = (s) =>
  s
    .split("\n")
    .map((x) => x.trim())
    .filter(Boolean);

async function reload() {
  settings = await api("/v1/clinic/branches");
  renderList();
  await renderEditor();
}

/** The branches, then the router's system branch `_router` (only a title and a system prompt). */
const allBranches = () => [...settings.branches, ...(settings.router ? [{ ...settings.router, system: true }] : [])];

function renderList() {
  $("#branches").replaceChildren(
    ...allBranches().map((b) =>
      el(
        "div",
        {
          class: `list-item${b.code === current ? " on" : ""}`,
          dataset: { branch: b.code },
          onclick: () => ((current = b.code), (location.hash = `branch=${b.code}`), renderList(), renderEditor()),
        },
        el("div", {}, el("b", {}, b.title)),
        el(
          "div",
          { class: "small muted mono" },
          `${b.code} · v${b.version}${b.system ? " · системная" : ""}${settings.stepGraphs.some((g) => g.branch === b.code) ? " · шаги" : ""}`,
        ),
      ),
    ),
  );
}

function versionsTable(rows, activate) {
  const active = rows.find((r) => r.active)?.version ?? 0;
  return el(
    "table",
    {},
    el("tr", {}, el("th", {}, "Версия"), el("th", {}, "Создана"), el("th", {}, "Статус"), el("th", {}, "")),
    [...rows]
      .reverse()
      .map((r) =>
        el(
          "tr",
          { dataset: { version: r.version } },
          el("td", {}, `v${r.version}`),
          el("td", { class: "small" }, fmtTime(r.createdAt)),
          el("td", {}, r.active ? el("span", { class: "badge ok" }, "активна") : ""),
          el(
            "td",
            {},
            r.active
              ? ""
              : el(
                  "button",
                  { class: "secondary", type: "button", onclick: () => activate(r.version) },
                  r.version < active ? `Откатить к v${r.version}` : `Сделать активной`,
                ),
          ),
        ),
      ),
  );
}

async function renderEditor() {
  const b = allBranches().find((x) => x.code === current) ?? settings.branches[0];
  if (!b) return;
  current = b.code;
  const versions = (await api(`/v1/clinic/branches/${b.code}/versions`)).versions;
  const f = {
    title: el("input", { value: b.title, style: "width:100%" }),
    system_prompt: el("textarea", { class: "prose", rows: 7 }, b.system_prompt),
    rules: el("textarea", { class: "prose", rows: 5 }, (b.rules ?? []).join("\n")),
    exit_conditions: el("textarea", { class: "prose", rows: 5 }, (b.exit_conditions ?? []).join("\n")),
    knowledge: el(
      "select",
      {},
      ["always", "side_questions", "never"].map((k) => el("option", { value: k, selected: k === b.knowledge }, k)),
    ),
    activate: el("input", { type: "checkbox", checked: true }),
  };
  const err = el("div", { class: "field-error" });
  const save = async () => {
    err.textContent = "";
    try {
      const r = await api(`/v1/clinic/branches/${b.code}/versions`, {
        method: "POST",
        body: {
          config: b.system
            ? { title: f.title.value, system_prompt: f.system_prompt.value }
            : {
                title: f.title.value,
                system_prompt: f.system_prompt.value,
                rules: lines(f.rules.value),
                exit_conditions: lines(f.exit_conditions.value),
                knowledge: f.knowledge.value,
              },
          activate: f.activate.checked,
        },
      });
      toast(`Сохранено: ${b.code} v${r.version}${r.active ? " (активна)" : ""}`);
      await reload();
    } catch (e) {
      err.textContent = errorText(e);
    }
  };
  const activate = async (v) => {
    await api(`/v1/clinic/branches/${b.code}/versions/${v}/activate`, { method: "POST" });
    toast(`Активна ${b.code} v${v}`);
    await reload();
  };
  const branchPanel = el(
    "div",
    { class: "panel", id: "branch-panel" },
    el(
      "h2",
      {},
      b.system ? `Системная ветка ${b.code} (маршрутизатор)` : `Ветка ${b.code}`,
      el("span", { class: "right badge ok" }, `активна v${b.version}`),
    ),
    el("label", { class: "field" }, el("span", {}, "Название"), f.title),
    el("label", { class: "field" }, el("span", {}, "Системный промпт"), f.system_prompt),
    // The router has no rules, exit conditions or knowledge of its own: only its prompt.
    b.system ? null : el("label", { class: "field" }, el("span", {}, "Правила (по одному в строке)"), f.rules),
    b.system
      ? null
      : el("label", { class: "field" }, el("span", {}, "Условия выхода (по одному в строке)"), f.exit_conditions),
    b.system ? null : el("label", { class: "field" }, el("span", {}, "База знаний"), f.knowledge),
    el(
      "div",
      { class: "row" },
      el("button", { type: "button", onclick: save }, "Сохранить как новую версию"),
      el("label", { class: "row small" }, f.activate, "сразу сделать активной"),
    ),
    err,
    el("h3", {}, "Версии промпта"),
    versionsTable(versions, activate),
  );
  const parts = [branchPanel];
  const graph = settings.stepGraphs.find((g) => g.branch === b.code);
  if (graph) parts.push(await stepsPanel(b.code, graph));
  $("#editor").replaceChildren(...parts);
}

async function stepsPanel(branch, graph) {
  const versions = (await api(`/v1/clinic/branches/${branch}/steps/versions`)).versions;
  const codes = graph.steps.map((s) => s.code);
  const top = el("div", { class: "field-error", id: "steps-error" });
  const saveBtn = el("button", { type: "button", id: "save-steps" }, "Сохранить шаги как новую версию");
  const cards = graph.steps.map((s) => {
    const prompt = el("textarea", { class: "prose", rows: 3, dataset: { prompt: s.code } }, s.prompt);
    const question = el("input", { value: s.question ?? "", style: "width:100%" });
    const checks = codes.map((c) =>
      el("label", {}, el("input", { type: "checkbox", checked: s.allowed_next.includes(c), dataset: { next: c } }), c),
    );
    const guards = el(
      "textarea",
      { rows: Math.min(10, 2 + json(s.guards).split("\n").length), dataset: { guards: s.code }, spellcheck: false },
      Object.keys(s.guards).length ? json(s.guards) : "{}",
    );
    const guardErr = el("div", { class: "field-error", dataset: { guardsError: s.code } });
    const stepErr = el("div", { class: "field-error", dataset: { stepError: s.code } });
    const check = () => {
      const r = parseGuards(guards.value);
      guards.classList.toggle("invalid", !r.ok);
      guardErr.textContent = r.ok ? "" : r.error;
      validateAll();
      return r;
    };
    guards.addEventListener("input", check);
    const card = el(
      "div",
      { class: "step-card", dataset: { step: s.code } },
      el("h4", {}, el("code", {}, s.code), s.title ?? ""),
      el("label", { class: "field" }, el("span", {}, "Промпт шага"), prompt),
      el("label", { class: "field" }, el("span", {}, "Вопрос шага"), question),
      el(
        "div",
        { class: "field" },
        el("span", { class: "small muted" }, "Допустимые переходы (allowed_next)"),
        el("div", { class: "checks" }, checks),
      ),
      el("label", { class: "field" }, el("span", {}, "Защитные условия (guards), JSON"), guards),
      guardErr,
      stepErr,
    );
    return { s, card, prompt, question, checks, guards, check, stepErr };
  });
  function validateAll() {
    const bad = cards.filter((c) => !parseGuards(c.guards.value).ok);
    saveBtn.disabled = bad.length > 0;
    top.textContent = bad.length
      ? `Исправьте защитные условия: ${bad.map((c) => c.s.code).join(", ")} — до этого сохранить нельзя.`
      : "";
  }
  saveBtn.addEventListener("click", async () => {
    for (const c of cards) c.stepErr.textContent = "";
    top.textContent = "";
    const steps = cards.map((c) => ({
      ...c.s,
      prompt: c.prompt.value,
      question: c.question.value,
      allowed_next: c.checks
        .map((l) => l.querySelector("input"))
        .filter((i) => i.checked)
        .map((i) => i.dataset.next),
      guards: c.check().value ?? {},
    }));
    try {
      const r = await api(`/v1/clinic/branches/${branch}/steps`, {
        method: "POST",
        body: { graph: { initial: graph.initial, steps }, activate: true },
      });
      toast(`Шаги ${branch}: сохранена и активна v${r.version}`);
      await reload();
    } catch (e) {
      // "steps.2.guards.x.required_slots: …" → under that step's card; anything else above.
      const m = /steps\.(\d+)\.([^:]+):/.exec(e.message ?? "");
      const card = m ? cards[Number(m[1])] : undefined;
      if (card) card.stepErr.textContent = errorText(e);
      else top.textContent = errorText(e);
    }
  });
  const activate = async (v) => {
    await api(`/v1/clinic/branches/${branch}/steps/versions/${v}/activate`, { method: "POST" });
    toast(`Активна версия шагов v${v}`);
    await reload();
  };
  return el(
    "div",
    { class: "panel", id: "steps-panel" },
    el("h2", {}, `Шаги ветки ${branch}`, el("span", { class: "right badge ok" }, `активна v${graph.version}`)),
    el(
      "p",
      { class: "small muted" },
      "Машина шагов генерируется из этого графа: переход в шаг возможен, только если он отмечен в allowed_next текущего шага и пройдены защитные условия.",
    ),
    cards.map((c) => c.card),
    top,
    el("div", { class: "row" }, saveBtn),
    el("h3", {}, "Версии графа шагов"),
    versionsTable(versions, activate),
  );
}

reload()
  .catch((e) => {
    $("#editor").replaceChildren(el("div", { class: "error-box" }, errorText(e)));
    // The branch list must not stay on «Загрузка…»: it says what stopped it too.
    $("#branches").replaceChildren(el("div", { class: "error-box" }, errorText(e)));
  })
  .finally(() => (document.body.dataset.ready = "true"));
