import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { escalatedThread, hasChromium, openAt, screenshot, skipReason, useBrowserStack } from "./browser";

/**
 * Transfer on the operator's desk in a real browser (issue 43) at 390 and 1280 px, each operator
 * with a token of their own (API_TOKENS binds it to a person, doc/inbox.md): Иван takes an
 * escalated thread and hands it to Мария with the page's «Передать» control; Мария's «мои» list
 * gets the thread and Иван's loses it; the patient's page shows no bot message in between (the
 * machine stays with a human), a line saying Мария leads the dialogue now, then her answer.
 * Pictures: test-results/e2e/transfer-*.png (copied to doc/images/, listed in doc/images.md).
 */

const IVAN = "tok-ivan";
const MARIA = "tok-maria";
const ADMIN = "tok-admin";
const stack = useBrowserStack({
  tokens: `operator@clinic:${IVAN}:Иван,operator@clinic:${MARIA}:Мария,clinic:${ADMIN}`,
});

/** The ids the page's list shows now. */
const listed = (page: Page) =>
  page.locator("#items .inbox-item").evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.id));

/** Pick «мои» in the list's filter (the page reloads the list on change). */
async function onlyMine(page: Page) {
  await page.selectOption("#assigned", "me");
}

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: transfer on the operator's desk" : `e2e: transfer on the operator's desk (${skipReason})`,
  () => {
    for (const width of [390, 1280]) {
      it(`Иван transfers a thread to Мария at ${width} px; the bot stays out`, async () => {
        const { llm, server, browser } = stack;
        const errors: string[] = [];
        const id = await escalatedThread(stack, `Bearer ${ADMIN}`);
        const patient = await openAt(
          browser,
          `${server.url}/sandbox.html#thread=${id}`,
          width,
          { token: ADMIN },
          errors,
        );
        await patient.waitForSelector('.msg.assistant:has-text("Передаю администратору")');
        const botBefore = await patient.locator(".msg.assistant").count();

        const ivan = await openAt(browser, `${server.url}/inbox.html#id=${id}`, width, { token: IVAN }, errors);
        expect(await ivan.locator(".operator-name").textContent()).toBe("Вы: Иван");
        await ivan.click("#take");
        await ivan.waitForSelector("#operator-text");
        expect(await ivan.locator('[data-field="status"]').textContent()).toContain("(Иван)");
        await onlyMine(ivan);
        await expect.poll(() => listed(ivan), { timeout: 10_000 }).toContain(id);

        const maria = await openAt(browser, `${server.url}/inbox.html`, width, { token: MARIA }, errors);
        expect(await maria.locator(".operator-name").textContent()).toBe("Вы: Мария");
        await onlyMine(maria);
        await expect.poll(() => listed(maria), { timeout: 10_000 }).not.toContain(id);

        // The control: a colleague to pick (not the holder himself) and «Передать», usable on a phone.
        const pick = ivan.locator("#hand-over-to");
        expect(await pick.locator("option").allTextContents()).toEqual(["Мария"]);
        await pick.selectOption("Мария");
        await pick.scrollIntoViewIfNeeded();
        await screenshot(ivan, `transfer-control-${width}`);
        await ivan.click("#transfer");

        // Иван's page: the holder is Мария now, and his «мои» no longer lists it.
        await expect.poll(() => ivan.locator('[data-field="status"]').textContent()).toContain("(Мария)");
        await expect.poll(() => listed(ivan), { timeout: 10_000 }).not.toContain(id);
        await expect.poll(() => ivan.locator('[data-field="assignee"]').textContent()).toBe("Мария");
        // Мария's «мои» lists it (her page hears of it on the desk stream, well before the 10 s
        // list poll) and opens it as hers.
        await expect.poll(() => listed(maria), { timeout: 4_000 }).toContain(id);
        await maria.click(`.inbox-item[data-id="${id}"]`);
        await maria.waitForSelector("#operator-text");
        expect(await maria.locator('[data-field="status"]').textContent()).toContain("(Мария)");
        await screenshot(ivan, `transfer-giver-${width}`);
        await screenshot(maria, `transfer-receiver-mine-${width}`);

        // The patient's page: told who answers now, no bot message since the escalation; Мария's answer arrives.
        await patient.waitForSelector('.msg.note[data-note="conversation.transferred"]');
        expect(await patient.locator('.msg.note[data-note="conversation.transferred"]').textContent()).toBe(
          "Диалог ведёт администратор Мария: ответ придёт сюда.",
        );
        expect(await patient.locator(".msg.assistant").count()).toBe(botBefore);
        const answer = `Здравствуйте! Это Мария, продолжу вместо Ивана (${width}).`;
        await maria.fill("#operator-text", answer);
        await maria.keyboard.press("Enter");
        await patient.waitForSelector(`.msg.operator:has-text("${answer}")`);
        expect(await patient.locator(".msg.operator .who").last().textContent()).toBe("Администратор · Мария");
        expect(await patient.locator(".msg.assistant").count()).toBe(botBefore);
        await screenshot(patient, `transfer-patient-${width}`);
        expect(errors).toEqual([]);
        for (const p of [patient, ivan, maria]) await p.context().close();
      });
    }
  },
);
