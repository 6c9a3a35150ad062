import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { workspace } from "../systems/workbench/fixtures";
import { hasChromium, openPage, screenshot, skipReason, useBrowserStack } from "./browser";

/** Issue 17 item 7: each page defect, in the browser against the real server and a scripted model. */

const stack = useBrowserStack();
const cyrillic = /[а-яё]/i;

async function sendText(page: Page, text: string) {
  await page.fill("#text", text);
  await page.click("#send");
}
const failedBubble = (page: Page) => page.locator(".msg.assistant[data-failed]").last();
/** No bubble is left blinking. */
const streaming = (page: Page) => page.locator(".msg.assistant.streaming").count();

/**
 * Sends `text`, presses «Стоп» once the reply streams, and checks the page took the turn back:
 * the failed bubble says so, nothing streams, the text is back in the field, the button is gone.
 */
async function stopMidReply(page: Page, text: string) {
  await sendText(page, text);
  await page.waitForFunction(
    () => (document.querySelector(".msg.assistant.streaming .text")?.textContent ?? "").length > 0,
  );
  expect(await page.isVisible("#stop")).toBe(true);
  await page.click("#stop");
  await page.waitForSelector(".msg.assistant[data-failed]");
  expect(await failedBubble(page).locator('[data-error="turn"] [data-message]').textContent()).toBe(
    "Остановлено. Текст сообщения возвращён в поле ввода.",
  );
  expect(await streaming(page)).toBe(0);
  expect(await page.inputValue("#text")).toBe(text);
  expect(await page.isHidden("#stop")).toBe(true);
}

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: page defects of issue 17" : `e2e: page defects (${skipReason})`,
  () => {
    it("Песочница: a refused message (400) and a proxy error (502) leave no blinking bubble, say why in Russian, and keep the typed text", async () => {
      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/sandbox.html`, errors);
      const long = "а".repeat(4001);
      await sendText(page, long);
      await page.waitForSelector(".msg.assistant[data-failed]");
      expect(await streaming(page)).toBe(0);
      expect(await failedBubble(page).locator('[data-error="turn"] [data-message]').textContent()).toBe(
        "Сообщение слишком длинное: не больше 4000 символов. Сократите его, пожалуйста.",
      );
      expect(await failedBubble(page).locator(".text").textContent()).toBe("");
      expect(await page.inputValue("#text")).toBe(long);
      expect(await page.isEnabled("#send")).toBe(true);

      // A gateway in front of the server answers with a bare 502 page: still a Russian message.
      await page.route("**/v1/clinic/threads/*/messages", (r) =>
        r.fulfill({ status: 502, contentType: "text/html", body: "<h1>502 Bad Gateway</h1>" }),
      );
      await sendText(page, "Хочу записаться");
      await expect.poll(() => page.locator(".msg.assistant[data-failed]").count()).toBe(2);
      const msg = (await failedBubble(page).locator('[data-error="turn"] [data-message]').textContent())!;
      expect(msg).toMatch(cyrillic);
      expect(msg).not.toContain("HTTP");
      expect(await page.inputValue("#text")).toBe("Хочу записаться");
      expect(await streaming(page)).toBe(0);
      await screenshot(page, "defect-sandbox-error");
      expect(errors).toEqual([]);
    });

    it("Песочница: Stop ends a streaming reply, the bubble stops blinking and the text returns to the composer", async () => {
      stack.llm.script("router", "general_info");
      stack.llm.script("branch", {
        content: "Мы работаем ежедневно с восьми утра до восьми вечера, без выходных и перерывов на обед, приходите.",
        chunkDelayMs: 150,
      });
      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/sandbox.html`, errors);
      expect(await page.isHidden("#stop")).toBe(true);
      await stopMidReply(page, "Когда вы работаете?");
      expect(await page.isEnabled("#send")).toBe(true);
      expect(errors).toEqual([]);
    });

    it("Workbench: a refused message and a failed request keep the text with a Russian message; stage ids stay on one line; the diagram is readable at panel size", async () => {
      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/workbench.html`, errors);
      await page.fill("#workspace", JSON.stringify(workspace, null, 2));
      const long = "б".repeat(10_001);
      await sendText(page, long);
      await page.waitForSelector(".msg.assistant[data-failed]");
      expect(await failedBubble(page).locator('[data-error="turn"] [data-message]').textContent()).toBe(
        "Сообщение слишком длинное: не больше 10 000 символов. Сократите его, пожалуйста.",
      );
      expect(await page.inputValue("#text")).toBe(long);
      expect(await streaming(page)).toBe(0);
      await page.route("**/v1/workbench/conversations/*/messages", (r) =>
        r.fulfill({
          status: 500,
          contentType: "application/json",
          body: JSON.stringify({ error: { code: "internal", message: "Internal Server Error" } }),
        }),
      );
      await sendText(page, "Покажи composition-alpha");
      await expect.poll(() => page.locator(".msg.assistant[data-failed]").count()).toBe(2);
      expect(await failedBubble(page).locator('[data-error="turn"] [data-message]').textContent()).toBe(
        "Ошибка сервера. Ответ не сохранён — отправьте сообщение ещё раз.",
      );
      expect(await page.inputValue("#text")).toBe("Покажи composition-alpha");
      await page.unroute("**/v1/workbench/conversations/*/messages");

      // A real turn: its stages under the reply, each id on one line at the panel's width.
      stack.llm.script("answer", "Композиция [[composition-alpha]] лежит в папке «Продажи».");
      await page.fill("#text", "Покажи composition-alpha");
      await page.click("#send");
      await page.waitForSelector(".msg.assistant[data-done] .run-stages", { state: "attached" });
      // Collapsed until opened; opened, the data under each stage is what squeezed the summary line.
      expect(await page.locator("details.run-stages[open], details.stage[open]").count()).toBe(0);
      await page.$$eval(".run-stages, .stage", (ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = true)));
      await page.setViewportSize({ width: 1024, height: 800 });
      const ids = await page.$$eval(".stage > summary > b.mono", (bs) =>
        bs.map((b) => ({
          text: b.textContent,
          lines: Math.round(b.getBoundingClientRect().height / parseFloat(getComputedStyle(b).lineHeight || "18")),
        })),
      );
      expect(ids.length).toBeGreaterThan(5);
      for (const id of ids) expect(id).toMatchObject({ lines: 1 });
      expect(ids.map((i) => i.text)).toContain("06");
      await page.setViewportSize({ width: 1440, height: 960 });

      // The diagram at panel size opens readable (≥ 80% of its natural size, around the current
      // state), not shrunk whole into the small box; «Вписать» shows it whole.
      await page.waitForSelector("#diagram .diagram-stage svg");
      expect(Number(await page.getAttribute("#diagram", "data-scale"))).toBeGreaterThanOrEqual(0.8);
      const fontPx = await page.$eval("#diagram svg g.s text.k", (t) => t.getBoundingClientRect().height);
      expect(fontPx).toBeGreaterThanOrEqual(9);
      await screenshot(page, "defect-workbench");
      expect(errors).toEqual([]);
    });

    it("Workbench: Stop ends a streaming answer and gives the text back", async () => {
      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/workbench.html`, errors);
      await page.fill("#workspace", JSON.stringify(workspace, null, 2));
      stack.llm.script("answer", {
        content:
          "Композиция [[composition-alpha]] лежит в папке «Продажи». Она считает скидку по сумме заказа. Других с этим именем нет.",
        chunkDelayMs: 200,
      });
      await stopMidReply(page, "Покажи composition-alpha");
      expect(errors).toEqual([]);
    });

    it("/favicon.ico is served, and every page links it", async () => {
      const r = await fetch(`${stack.server.url}/favicon.ico`);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toContain("image/svg+xml");
      expect(await r.text()).toContain("<svg");
      const page = await stack.browser.newPage();
      const missing: string[] = [];
      page.on("response", (res) => {
        if (res.status() === 404) missing.push(res.url());
      });
      await page.goto(`${stack.server.url}/sandbox.html`);
      await page.waitForSelector("body[data-ready]", { state: "attached" });
      expect(await page.$eval('link[rel="icon"]', (l) => (l as HTMLLinkElement).href)).toBe(
        `${stack.server.url}/favicon.ico`,
      );
      expect(missing).toEqual([]);
      await page.close();
    });

    it("Отладка, Песочница and Обращения fit a phone's width", async () => {
      for (const path of ["/", "/sandbox.html", "/inbox.html"]) {
        const page = await stack.browser.newPage({ viewport: { width: 375, height: 740 }, locale: "ru-RU" });
        await page.goto(`${stack.server.url}${path}`);
        await page.waitForSelector("body[data-ready]", { state: "attached" });
        const { scroll, width } = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          width: window.innerWidth,
        }));
        expect({ path, scroll }).toEqual({ path, scroll: width });
        // Nothing sticks out of the viewport on the right.
        const wide = await page.evaluate(() =>
          Array.from(document.querySelectorAll("main *, header *"))
            .filter(
              (e) =>
                (e as HTMLElement).offsetParent !== null &&
                e.getBoundingClientRect().right > window.innerWidth + 1 &&
                !e.closest(".diagram, pre, table, .messages"),
            )
            .map((e) => `${e.tagName}.${(e as HTMLElement).className}`),
        );
        expect({ path, wide }).toEqual({ path, wide: [] });
        if (path === "/") await screenshot(page, "defect-debug-phone", true);
        await page.close();
      }
    });

    it("an escalation turn that began sticky is badged as a switch only, not also «удержались в ветке»", async () => {
      const tail = (step: string, slots: object) =>
        `\nSTATE_JSON: ${JSON.stringify({ state_after: step, slots_updated: slots })}`;
      stack.llm.script("router", "new_booking");
      stack.llm.script("branch", `Как к вам обращаться?${tail("intro", { specialist: "ЛОР" })}`);
      stack.llm.script("router", "price_question");
      stack.llm.script(
        "branch",
        "Передаю администратору.\n[INTENT_CHANGE: escalate_human]",
        "Администратор скоро свяжется с вами.",
      );
      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/sandbox.html`, errors);
      await sendText(page, "Хочу к ЛОРу");
      await page.waitForFunction(() => document.querySelectorAll(".msg.assistant[data-done]").length >= 1);
      await sendText(page, "А это дорого? Позовите человека");
      await page.waitForFunction(() => document.querySelectorAll(".msg.assistant[data-done]").length >= 2);
      const second = page.locator(".msg.assistant[data-done]").nth(1);
      expect(await second.locator('[data-badge="handoff"]').count()).toBe(1);
      expect(await second.locator('[data-badge="escalated"]').count()).toBe(1);
      expect(await second.locator('[data-badge="sticky"]').count()).toBe(0);
      // The turn's events do hold both (it began sticky, then the branch handed off): the page shows one.
      const threadId = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get("thread");
      const th = (await (await fetch(`${stack.server.url}/v1/clinic/threads/${threadId}`)).json()) as {
        messages: { meta: { events?: string[] } }[];
      };
      expect(th.messages[3]!.meta.events).toEqual(expect.arrayContaining(["sticky", "handoff", "escalated"]));
      // Reloaded from the stored thread: the same badges.
      await page.reload();
      await page.waitForSelector("body[data-ready]", { state: "attached" });
      const stored = page.locator(".msg.assistant").nth(1);
      expect(await stored.locator('[data-badge="sticky"]').count()).toBe(0);
      expect(await stored.locator('[data-badge="handoff"]').count()).toBe(1);
      expect(errors).toEqual([]);
    });
  },
);
