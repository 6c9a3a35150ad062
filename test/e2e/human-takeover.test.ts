import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { stepTail } from "../utils/clinic-api";
import { hasChromium, openPage, screenshot, skipReason, useBrowserStack } from "./browser";
import { onServer } from "../utils/db";
import { modelEnv, startServerProcess } from "../reliability/processes";

/**
 * Issue 32 in a real browser: a patient escalates in Песочница; an operator takes the thread in
 * «Обращения» and writes; the patient's page shows the answer without a reload; release hands the
 * booking back to the bot at the step it had.
 */

const stack = useBrowserStack();

async function say(page: Page, text: string) {
  const n = await page.locator(".msg.assistant[data-done]").count();
  await page.fill("#text", text);
  await page.click("#send");
  await page.waitForFunction((k) => document.querySelectorAll(".msg.assistant[data-done]").length > k, n);
}

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: the operator answers the patient" : `e2e: takeover (${skipReason})`,
  () => {
    it("escalate in Песочница → take and write in «Обращения» → the patient sees it live → release → the booking goes on", async () => {
      const { llm, server, browser } = stack;
      const errors: string[] = [];
      const patient = await openPage(browser, `${server.url}/sandbox.html`, errors);
      llm.script("router", "new_booking");
      llm.script("branch", `Как к вам обращаться?${stepTail("intro", { specialist: "ЛОР" })}`);
      await say(patient, "Хочу записаться к ЛОРу");
      llm.script("router", "new_booking");
      llm.script("branch", `Анна, что вас беспокоит?${stepTail("qualify", { name: "Анна" })}`);
      await say(patient, "Анна");
      llm.script("router", "escalate_human");
      llm.script("branch", "[INTENT_CHANGE: escalate_human|explicit_request]", "Передаю администратору.");
      await say(patient, "Позовите живого человека");
      const threadId = new URLSearchParams(new URL(patient.url()).hash.slice(1)).get("thread")!;
      expect(threadId).toBeTruthy();

      const operator = await openPage(browser, `${server.url}/inbox.html#id=${threadId}`, errors);
      await operator.fill("#operator-name", "Мария");
      await operator.dispatchEvent("#operator-name", "change");
      await operator.waitForSelector("#take");
      expect(await operator.locator("#composer-hint").count()).toBe(1);
      await operator.click("#take");
      await operator.waitForSelector("#operator-text");
      // The patient's page is told that a human has the thread.
      await patient.waitForSelector('.msg.note[data-note="conversation.taken"]');
      expect(await patient.locator('.msg.note[data-note="conversation.taken"]').textContent()).toContain("Мария");

      // The patient writes while held: the holding reply; the operator's page shows it live.
      await say(patient, "Жду ответа");
      expect(await patient.locator(".msg.assistant[data-done]").last().textContent()).toContain("здесь, в этом чате");
      await operator.waitForFunction(() => document.querySelector("#transcript")?.textContent?.includes("Жду ответа"));

      const answer = "Анна, здравствуйте! Это администратор Мария. Запишу вас к ЛОРу.";
      await operator.fill("#operator-text", answer);
      const sent = Date.now();
      await operator.click("#operator-send");
      await patient.waitForSelector(`.msg.operator:has-text("${answer}")`, { timeout: 1_000 });
      const shownAfterMs = Date.now() - sent;
      expect(await patient.locator(".msg.operator .who").last().textContent()).toContain("Мария");
      await screenshot(patient, "takeover-patient");
      await screenshot(operator, "takeover-operator");
      console.log(`operator message shown on the patient's page ${shownAfterMs} ms after the click`);

      await operator.click("#release");
      await patient.waitForSelector('.msg.note[data-note="conversation.released"]');
      // The bot goes on with the booking at the step it had, knowing what the operator said.
      llm.script("router", "new_booking");
      llm.script("branch", `Что вас беспокоит?${stepTail("qualify")}`);
      await say(patient, "Продолжим запись");
      const state = await (await fetch(`${server.url}/v1/clinic/threads/${threadId}`)).json();
      expect(state.state).toMatchObject({ activeBranch: "new_booking", step: "qualify" });
      expect(
        llm.calls
          .at(-1)!
          .messages.map((m) => m.content)
          .join("\n"),
      ).toContain(`[Администратор клиники]: ${answer}`);
      expect(errors).toEqual([]);
    });

    it.runIf(onServer)(
      "across two server processes: the patient's page on process A, the operator's inbox on process B",
      { timeout: 180_000 },
      async () => {
        const { llm, server, browser, dbUrl } = stack;
        // Process B: a separate `node main.ts` on the same PostgreSQL database.
        const b = await startServerProcess(
          { env: { DATABASE_URL: dbUrl! }, dataDir: "", drop: async () => {} },
          modelEnv(llm),
        );
        try {
          const errors: string[] = [];
          const patient = await openPage(browser, `${server.url}/sandbox.html`, errors);
          llm.script("router", "escalate_human");
          llm.script("branch", "Передаю администратору.");
          await say(patient, "Соедините с администратором");
          const threadId = new URLSearchParams(new URL(patient.url()).hash.slice(1)).get("thread")!;
          const operator = await openPage(browser, `${b.url}/inbox.html#id=${threadId}`, errors);
          await operator.waitForSelector("#take");
          await operator.click("#take");
          await operator.waitForSelector("#operator-text");
          await patient.waitForSelector('.msg.note[data-note="conversation.taken"]');
          const answer = "Здравствуйте! Администратор на связи (процесс B).";
          await operator.fill("#operator-text", answer);
          const sent = Date.now();
          await operator.click("#operator-send");
          await patient.waitForSelector(`.msg.operator:has-text("${answer}")`, { timeout: 1_000 });
          console.log(`process B → the patient's page on process A: ${Date.now() - sent} ms after the click`);
          await operator.click("#release");
          await patient.waitForSelector('.msg.note[data-note="conversation.released"]');
          expect(errors).toEqual([]);
        } finally {
          await b.kill();
        }
      },
    );
  },
);
