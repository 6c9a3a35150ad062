import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { escalatedThread, hasChromium, openAt, screenshot, skipReason, useBrowserStack } from "./browser";

/**
 * The operator's desk in a real browser (issue 43) at a phone's 390 px and a desktop's 1280 px:
 * Иван has a thread open, Мария takes it — her page says «открыто у Ивана»; she types `/адр`, picks
 * the quick reply with Enter — Иван's page says «Мария печатает», the patient's page
 * «Администратор Мария печатает…»; she sends it and the patient reads the template's text.
 * Pictures: test-results/e2e/desk-*.png (copied to doc/images/, listed in doc/images.md).
 */

const stack = useBrowserStack();
const TEMPLATE = "Мы находимся по адресу: ул. Ленина, 1, вход со двора. Ждём вас!";

const open = (browser: Browser, url: string, width: number, operator: string | null, errors: string[]) =>
  openAt(browser, url, width, { operator }, errors);

const text = (page: Page, sel: string) => page.locator(sel).textContent();

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: the operator's desk" : `e2e: the operator's desk (${skipReason})`,
  () => {
    for (const width of [390, 1280]) {
      it(`presence and a quick reply at ${width} px`, async () => {
        const { llm, server, browser } = stack;
        const errors: string[] = [];
        // The template is made on Настройки → «Быстрые ответы».
        const settings = await open(browser, `${server.url}/settings.html`, width, null, errors);
        const fresh = settings.locator('.quick-reply-edit[data-quick=""]');
        await fresh.locator("input").fill(`адрес-${width}`);
        await fresh.locator("textarea").fill(TEMPLATE);
        await fresh.locator('[data-action="add"]').click();
        await settings.waitForSelector(`.quick-reply-edit[data-quick="адрес-${width}"]`);
        await settings.context().close();
        const id = await escalatedThread(stack);
        const patient = await open(browser, `${server.url}/sandbox.html#thread=${id}`, width, null, errors);
        const ivan = await open(browser, `${server.url}/inbox.html#id=${id}`, width, "Иван", errors);
        await ivan.waitForSelector("#take");
        const maria = await open(browser, `${server.url}/inbox.html#id=${id}`, width, "Мария", errors);

        // Мария sees who else has the thread open, on the detail and on its row in the list.
        await expect.poll(() => text(maria, "#presence"), { timeout: 10_000 }).toBe("открыто у Ивана");
        await expect
          .poll(() => text(maria, `.inbox-item[data-id="${id}"] [data-badge="presence"]`), { timeout: 10_000 })
          .toBe("открыто у Ивана");
        await maria.click("#take");
        await maria.waitForSelector("#operator-text");
        await maria.waitForSelector(`#quick-replies [data-quick="адрес-${width}"]`);

        // `/` and a word: the matching templates; Иван's page and the patient's show the typing.
        await maria.click("#operator-text");
        await maria.keyboard.type("/адр");
        await maria.waitForSelector(`#quick-menu .quick-option[data-quick="адрес-${width}"]`);
        await expect.poll(() => text(ivan, "#presence"), { timeout: 10_000 }).toBe("Мария печатает");
        await expect
          .poll(() => text(patient, "#operator-typing"), { timeout: 10_000 })
          .toBe("Администратор Мария печатает…");
        await screenshot(maria, `desk-quick-reply-menu-${width}`);
        await screenshot(ivan, `desk-presence-typing-${width}`);
        await screenshot(patient, `desk-patient-typing-${width}`);

        await maria.keyboard.press("Enter");
        expect(await maria.inputValue("#operator-text")).toBe(TEMPLATE);
        expect(await maria.locator("#quick-menu").isHidden()).toBe(true);
        await maria.keyboard.press("Enter");
        await patient.waitForSelector(`.msg.operator:has-text("вход со двора")`);
        expect(await text(patient, ".msg.operator .text")).toBe(TEMPLATE);
        expect(await patient.locator("#operator-typing").count()).toBe(0);

        // One click on a chip inserts the template too.
        await maria.click(`#quick-replies [data-quick="адрес-${width}"]`);
        expect(await maria.inputValue("#operator-text")).toBe(TEMPLATE);
        expect(errors).toEqual([]);
        for (const p of [patient, ivan, maria]) await p.context().close();
      });
    }
  },
);
