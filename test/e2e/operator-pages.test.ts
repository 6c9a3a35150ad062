import { describe, expect, it } from "vitest";
import { hasChromium, openPage, screenshot, skipReason, useBrowserStack } from "./browser";

/** The other operator pages in a browser: Отладка, a guard block and an escalation in the Sandbox, versions, Схемы, API, Документация. */

const stack = useBrowserStack();

describe.skipIf(!hasChromium)(hasChromium ? "e2e: operator pages" : `e2e: operator pages (${skipReason})`, () => {
  it("Отладка: upload a document, see its chunks, re-index, ask one question without memory", async () => {
    const errors: string[] = [];
    const page = await openPage(stack.browser, `${stack.server.url}/`, errors);
    expect(await page.textContent("#docs")).toContain("База пуста");
    // The branch lists come from the active settings (GET /v1/clinic/branches), not from the page.
    await page.waitForSelector("#search select[name=branch] option[value=price_question]", { state: "attached" });
    const codes = await page.$$eval("#search select[name=branch] option", (os) =>
      os.map((o) => (o as HTMLOptionElement).value),
    );
    expect(codes.sort()).toEqual([
      "",
      "escalate_human",
      "general_info",
      "medical_question",
      "new_booking",
      "price_question",
      "reschedule",
    ]);
    await page.fill("#upload [name=title]", "Цены и часы работы");
    await page.fill(
      "#upload [name=text]",
      "# Цены\n\nПриём ЛОРа — 2500 рублей. Повторный — 2000 рублей.\n\n# Часы работы\n\nКлиника работает с 8:00 до 21:00 без выходных.",
    );
    await page.click("#upload button[type=submit]");
    await page.waitForSelector("#docs tr[data-doc]");
    await page.waitForSelector("#chunks [data-chunk]");
    expect(await page.locator("#chunks [data-chunk]").count()).toBe(2);
    expect(await page.textContent("#chunks")).toContain("Клиника работает с 8:00 до 21:00");
    await page.click("#docs tr[data-doc] button:has-text('Переразметить')");
    await page.waitForSelector(".toast.on");

    stack.llm.script("router", "general_info");
    stack.llm.script("branch", "Мы работаем с 8:00 до 21:00 без выходных.");
    await page.fill("#ask [name=q]", "До скольки вы работаете?");
    await page.click("#ask button");
    await page.waitForSelector("#answer [data-done]", { state: "attached" });
    expect(await page.textContent("#answer .msg.assistant")).toBe("Мы работаем с 8:00 до 21:00 без выходных.");
    expect(await page.textContent('#answer [data-badge="router"]')).toBe("Решение маршрутизатора: general_info");
    expect(await page.textContent('#answer [data-detail="rag"]')).toContain("8:00 до 21:00");
    expect(await page.textContent('#answer [data-detail="prompt"] pre')).toContain("[БАЗА ЗНАНИЙ]");
    // No memory: the question went to a thread of its own, with no earlier messages.
    const branchCall = stack.llm.calls.find((c) => c.role === "branch")!;
    expect(branchCall.messages.map((m) => m.role)).toEqual(["system", "user"]);
    await screenshot(page, "debug-knowledge-base");
    expect(errors).toEqual([]);
  });

  it("Песочница: a guard block in red, then a hand-off to an operator with the booking suspended", async () => {
    stack.llm.reset();
    stack.llm.script("router", "new_booking", "new_booking", "escalate_human");
    stack.llm.script(
      "branch",
      'Как зовут ребёнка и что беспокоит?\nSTATE_JSON: {"state_after": "qualify", "slots_updated": {"name": "Маша"}}',
      'Для записи ребёнка нужны ФИО и телефон представителя.\nSTATE_JSON: {"state_after": "present", "slots_updated": {"is_child": true, "reason": "болит ухо"}}',
      "[INTENT_CHANGE: escalate_human|acute_pain]",
      "Передаю администратору — с вами свяжутся в течение нескольких минут.",
    );
    const errors: string[] = [];
    const page = await openPage(stack.browser, `${stack.server.url}/sandbox.html`, errors);
    for (const [i, text] of ["Хочу записать дочь", "Болит ухо", "Ей всё хуже, ухо болит сильнее"].entries()) {
      await page.fill("#text", text);
      await page.click("#send");
      await page.waitForFunction((k) => document.querySelectorAll(".msg.assistant[data-done]").length >= k, i + 1);
      if (i === 1) {
        expect(await page.textContent('[data-guard="require_legal_rep"]')).toBe(
          "защитное условие require_legal_rep не пройдено — ждём: legal_rep_name, legal_rep_phoneДля записи ребёнка нужны ФИО и телефон законного представителя",
        );
        expect(await page.textContent('[data-field="step"]')).toBe("qualify");
        await screenshot(page, "sandbox-guard-block");
      }
    }
    const last = page.locator(".msg.assistant[data-done]").nth(2);
    expect(await last.locator('[data-badge="escalated"]').textContent()).toBe(
      "Передача оператору · причина: acute_pain (острое состояние)",
    );
    expect(await last.locator('[data-badge="handoff"]').count()).toBe(1);
    expect(await page.textContent('[data-field="activeBranch"]')).toBe("escalate_human");
    expect(await page.textContent('[data-field="handoffs"]')).toBe("Переключений: 1 из 3");
    const suspended = (await page.textContent('[data-field="suspended"]'))!;
    expect(suspended).toMatch(/^new_booking · шаг qualify · слоты: /);
    expect(suspended.split(": ")[1]!.split(", ").sort()).toEqual(["is_child", "name", "reason"]);
    // The steps diagram lights the step the suspended booking waits on, and says it is suspended.
    await page.waitForSelector('#diagram svg g[data-active="true"][data-state$=".qualify"]', { state: "attached" });
    expect(await page.textContent("#diagram svg")).toContain("сценарий отложен на шаге qualify");
    await screenshot(page, "sandbox-escalation");
    expect(errors).toEqual([]);
  });

  it("Настройки: a branch prompt version is created, activated and rolled back", async () => {
    const errors: string[] = [];
    const page = await openPage(stack.browser, `${stack.server.url}/settings.html#branch=price_question`, errors);
    await page.waitForSelector("#branch-panel");
    expect(await page.locator("#steps-panel").count()).toBe(0);
    const prompt = page.locator("#branch-panel textarea").first();
    await prompt.fill(`${await prompt.inputValue()} Всегда называй цену в рублях.`);
    await page.click("#branch-panel button:has-text('Сохранить как новую версию')");
    await page.waitForFunction(() => document.querySelector("#branch-panel h2")?.textContent?.includes("активна v2"));
    expect(await page.textContent('[data-branch="price_question"]')).toContain("v2");
    await page.click('#branch-panel tr[data-version="1"] button');
    await page.waitForFunction(() => document.querySelector("#branch-panel h2")?.textContent?.includes("активна v1"));
    expect(await page.locator("#branch-panel textarea").first().inputValue()).not.toContain(
      "Всегда называй цену в рублях.",
    );
    await screenshot(page, "settings-branch-versions");
    expect(errors).toEqual([]);
  });

  it("Схемы, API and Документация render", { timeout: 90_000 }, async () => {
    const errors: string[] = [];
    const machines = await openPage(stack.browser, `${stack.server.url}/machines.html`, errors);
    await machines.waitForFunction(() => document.querySelectorAll("#list [data-machine] svg").length === 4);
    await screenshot(machines, "machines", true);
    // A clinic thread's id: only the clinic's machines, highlighted, and no error on the others.
    const thread = (
      (await (await fetch(`${stack.server.url}/v1/clinic/threads`, { method: "POST" })).json()) as { threadId: string }
    ).threadId;
    const scoped = await openPage(stack.browser, `${stack.server.url}/machines.html#conversation=${thread}`, errors);
    await scoped.waitForSelector('[data-scope="clinic"]');
    await scoped.waitForFunction(() => document.querySelectorAll("#list [data-machine] svg").length === 2);
    expect(
      await scoped
        .locator("#list [data-machine]")
        .evaluateAll((ns) => ns.map((n) => (n as HTMLElement).dataset.machine)),
    ).toEqual(expect.arrayContaining(["clinic-dialogue"]));
    expect(await scoped.locator("#list .error-box").count()).toBe(0);
    const unknown = await openPage(
      stack.browser,
      `${stack.server.url}/machines.html#conversation=00000000-0000-4000-8000-000000000000`,
      errors,
    );
    await unknown.waitForSelector('[data-scope="unknown"]');
    expect(await unknown.locator("#list .error-box").count()).toBe(1);

    const api = await openPage(stack.browser, `${stack.server.url}/api.html`, errors);
    expect(await api.locator("details.op").count()).toBeGreaterThan(30);
    await api.click('details.op[data-op="post /v1/clinic/branches/{code}/steps"] summary');
    expect(await api.textContent('details.op[data-op="post /v1/clinic/branches/{code}/steps"]')).toContain(
      "allowed_next",
    );
    await screenshot(api, "api-reference");

    const docs = await openPage(stack.browser, `${stack.server.url}/docs.html`, errors);
    expect(await docs.textContent("article h1")).toBe("Как устроена система");
    expect(await docs.locator("article h2").count()).toBe(10);
    await screenshot(docs, "docs");
    expect(errors).toEqual([]);
  });
});
