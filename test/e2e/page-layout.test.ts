import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { hasChromium, screenshot, skipReason, useBrowserStack } from "./browser";
import { layoutDefects, offScreen } from "./layout-checks";
import { clinicApi, stepTail } from "../utils/clinic-api";
import { workspace } from "../systems/workbench/fixtures";

/**
 * Every operator page at a phone's width (390 px) and a laptop's (1280 px), first as it opens and
 * then through its main flow as a person drives it (the Sandbox: messages sent; Workbench: a
 * clarification, its candidates, a click; the inbox: take, answer, release). At each step: no field
 * or button narrower than 60 px, no sideways scrolling of the document or of any container, no
 * control drawn under another element, no word broken letter by letter — and after each step the
 * controls the next step needs (the composer, the answer's buttons, the clarification's question)
 * are on the screen without the person scrolling to find them.
 */

const PAGES = [
  "/",
  "/sandbox.html",
  "/inbox.html",
  "/settings.html",
  "/workbench.html",
  "/machines.html",
  "/api.html",
  "/docs.html",
  // Without stately.ai (the test has no internet): the local table after half a second.
  "/inspector.html?ui_timeout_ms=500",
];
const WIDTHS = [390, 1280];
const CLEAN = { narrow: [], overflow: 0, covered: [], sideways: [], brokenWords: [] };

const stack = useBrowserStack();

async function open(width: number, path: string): Promise<Page> {
  const page = await stack.browser.newPage({ viewport: { width, height: 844 }, locale: "ru-RU" });
  page.setDefaultTimeout(20_000);
  await page.route(/stately\.ai/, (r) => r.abort("internetdisconnected"));
  await page.goto(`${stack.server.url}${path}`);
  await page.waitForSelector("body[data-ready]", { state: "attached" });
  return page;
}

/** One step of a flow: the listed elements on screen as the page left them, then the page's defects. */
async function check(page: Page, shot: string, mustSee: string[]) {
  await page.waitForTimeout(300);
  const hidden = await offScreen(page, mustSee);
  await screenshot(page, shot);
  const d = await layoutDefects(page);
  return { hidden, ...d };
}

/** A clinic turn scripted for the model: the router's intent and the branch's reply. */
function clinicTurn(reply: string, step = "intro") {
  stack.llm.script("router", "new_booking");
  stack.llm.script("branch", `${reply}${stepTail(step, { specialist: "ЛОР" })}`);
}

describe.skipIf(!hasChromium)(hasChromium ? "e2e: page layout" : `e2e: page layout (${skipReason})`, () => {
  for (const width of WIDTHS)
    for (const path of PAGES)
      it(`${path} at ${width} px as it opens`, { timeout: 60_000 }, async () => {
        const page = await open(width, path);
        await page.waitForTimeout(500);
        const d = await layoutDefects(page);
        await screenshot(page, `layout-${path.replace(/\?.*/, "").replace(/\W+/g, "") || "debug"}-${width}`, true);
        await page.close();
        expect(d).toEqual(CLEAN);
      });

  for (const width of WIDTHS) {
    it(
      `Песочница at ${width} px: messages sent, the composer and the answer stay on screen`,
      { timeout: 90_000 },
      async () => {
        const page = await open(width, "/sandbox.html");
        const steps = [];
        const says = [
          [
            "Здравствуйте! Хочу записаться к ЛОРу, у меня третий день болит ухо и заложен нос.",
            "Конечно, запишу вас к ЛОРу. Как к вам обращаться? Подскажите также, удобнее утром или вечером.",
          ],
          [
            "Меня зовут Анна Сергеевна, удобнее вечером после шести, можно в любой будний день.",
            "Спасибо, Анна Сергеевна. Вечерние приёмы ЛОРа есть во вторник и четверг. Какой день выбрать?",
          ],
          ["Давайте четверг.", "Хорошо, четверг. Оставьте, пожалуйста, номер телефона для подтверждения записи."],
        ];
        for (const [i, [text, reply]] of says.entries()) {
          clinicTurn(reply!);
          await page.fill("#text", text!);
          await page.click("#send");
          await page.waitForFunction((n) => document.querySelectorAll(".msg.assistant[data-done]").length >= n, i + 1);
          steps.push(
            await check(page, `flow-sandbox-${i + 1}-${width}`, [
              "#text",
              "#send",
              ".msg.assistant[data-done]:last-of-type .text",
            ]),
          );
        }
        await screenshot(page, `layout-sandbox-flow-${width}`);
        await page.close();
        expect(steps).toEqual(steps.map(() => ({ hidden: [], ...CLEAN })));
      },
    );

    it(
      `Workbench at ${width} px: the clarification and its candidates in view, stages collapsed, a click answers`,
      { timeout: 90_000 },
      async () => {
        const page = await open(width, "/workbench.html");
        await page.fill("#workspace", JSON.stringify(workspace, null, 2));
        stack.llm.script("reranker", '{"choice": "clarify"}');
        await page.fill("#text", "Покажи композицию «Расчёт скидки»");
        await page.click("#send");
        await page.waitForSelector(".msg.assistant[data-clarification][data-done] .run-stages", { state: "attached" });
        const asked = await check(page, `flow-workbench-clarification-${width}`, [
          "[data-clarification] > .text > b",
          "[data-clarification] .candidates button",
          "#text",
          "#send",
        ]);
        const openStages = await page.locator("details.run-stages[open], details.stage[open]").count();

        stack.llm.script("answer", "Архивная версия: [[composition-discount-v1]] — старая версия расчёта скидки.");
        await page.click('[data-clarification] button[data-identity="composition-discount-v1"]');
        await page.waitForFunction(() => document.querySelectorAll(".msg.assistant[data-done]").length >= 2);
        const answered = await check(page, `flow-workbench-answered-${width}`, [
          ".msg.assistant[data-done]:last-of-type .text",
          "#text",
          "#send",
        ]);
        await screenshot(page, `layout-workbench-flow-${width}`);
        await page.close();
        expect({ openStages, asked, answered }).toEqual({
          openStages: 0,
          asked: { hidden: [], ...CLEAN },
          answered: { hidden: [], ...CLEAN },
        });
      },
    );

    it(`Обращения at ${width} px: a thread taken, answered and released`, { timeout: 90_000 }, async () => {
      const c = clinicApi(stack.server.url, "");
      const id = await c.newThread();
      clinicTurn("Как к вам обращаться?");
      await c.say(id, "Хочу записаться к ЛОРу");
      stack.llm.script("router", "escalate_human");
      stack.llm.script("branch", "[INTENT_CHANGE: escalate_human|explicit_request]", "Передаю администратору.");
      await c.say(id, "Позовите человека");

      const page = await open(width, "/inbox.html");
      await page.fill("#operator-name", "Мария");
      await page.click(`.inbox-item[data-id="${id}"]`);
      await page.waitForSelector("#take");
      const opened = await check(page, `flow-inbox-opened-${width}`, ["#take", "#release"]);
      await page.click("#take");
      await page.waitForSelector("#operator-composer textarea");
      const taken = await check(page, `flow-inbox-taken-${width}`, [
        "#operator-composer textarea",
        "#operator-composer button[type=submit]",
        "#release",
      ]);
      await page.fill("#operator-composer textarea", "Здравствуйте! Я администратор Мария, помогу с записью к ЛОРу.");
      await page.click("#operator-composer button[type=submit]");
      await page.waitForSelector(".inbox-detail .msg.operator");
      const answered = await check(page, `flow-inbox-answered-${width}`, [
        ".inbox-detail .msg.operator:last-of-type",
        "#operator-composer textarea",
        "#release",
      ]);
      await page.click("#release");
      await page.waitForSelector("#take");
      const released = await check(page, `flow-inbox-released-${width}`, ["#take"]);
      await screenshot(page, `layout-inbox-flow-${width}`);
      await page.close();
      expect({ opened, taken, answered, released }).toEqual({
        opened: { hidden: [], ...CLEAN },
        taken: { hidden: [], ...CLEAN },
        answered: { hidden: [], ...CLEAN },
        released: { hidden: [], ...CLEAN },
      });
    });
  }
});
