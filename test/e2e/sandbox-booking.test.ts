import { existsSync } from "node:fs";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { hasChromium, kbDocument, openPage, screenshot, skipReason, useBrowserStack } from "./browser";

/** Песочница, end to end: a whole booking dialogue typed into the page, answered by a scripted model. */

const stack = useBrowserStack();

const tail = (step: string, slots: object, extra = "") =>
  `\nSTATE_JSON: {"state_after": "${step}", "slots_updated": ${JSON.stringify(slots)}${extra}}`;

async function say(page: Page, text: string, n: number) {
  await page.fill("#text", text);
  await page.click("#send");
  await page.waitForFunction((k) => document.querySelectorAll(".msg.assistant[data-done]").length >= k, n);
}

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: Песочница — full booking dialogue" : `e2e: Песочница (${skipReason})`,
  () => {
    it("books intro → qualify → present → offer_time → book → close, with badges, state panel, a side question and the live diagram", async () => {
      const turns: [string, string, string][] = [
        [
          "Здравствуйте, хочу записаться к ЛОРу",
          "new_booking",
          `Здравствуйте! Подскажите, как к вам обращаться?${tail("intro", { specialist: "ЛОР" })}`,
        ],
        ["Алексей", "new_booking", `Алексей, расскажите, что вас беспокоит?${tail("qualify", { name: "Алексей" })}`],
        [
          "а сколько стоит приём?",
          "price_question",
          `Первичный приём ЛОРа — 2500 ₽. Так что вас беспокоит?${tail("qualify", {}, ', "soft_insertion": true')}`,
        ],
        [
          "Болит ухо третий день",
          "new_booking",
          `Предлагаю приём у ЛОРа, 30 минут. Подходит?${tail("present", { reason: "болит ухо" })}`,
        ],
        ["Да, подходит", "new_booking", `Когда вам удобно прийти?${tail("offer_time", {})}`],
        [
          "Завтра в 10 утра",
          "new_booking",
          `Записываю вас к ЛОРу на завтра, 10:00 — подтверждаете?${tail("book", { preferred_time: "завтра 10:00" })}`,
        ],
        ["Да, подтверждаю", "new_booking", `Готово! Ждём вас завтра в 10:00.${tail("close", { confirmed: true })}`],
      ];
      for (const [, router, branch] of turns) {
        stack.llm.script("router", router);
        stack.llm.script("branch", branch);
      }
      // A price list in the knowledge base: the side question's turn retrieves from it.
      await kbDocument(
        stack,
        "Цены",
        "# Приём ЛОРа\n\nПервичный приём ЛОРа стоит 2500 рублей, повторный — 2000 рублей.",
      );
      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/sandbox.html`, errors);
      for (const [i, [text]] of turns.entries()) await say(page, text, i + 1);

      const replies = page.locator(".msg.assistant[data-done] .text");
      await expect.poll(() => replies.count()).toBe(7);
      // The service tail never reaches the patient, streamed or final.
      expect((await replies.allTextContents()).join("\n")).not.toContain("STATE_JSON");
      expect(await replies.nth(6).textContent()).toBe("Готово! Ждём вас завтра в 10:00.");

      // Badges under the replies: router decision on every one, the side question flagged on the third.
      const third = page.locator(".msg.assistant[data-done]").nth(2);
      expect(await third.locator('[data-badge="router"]').textContent()).toBe("Решение маршрутизатора: price_question");
      expect(await third.locator('[data-badge="sticky"]').count()).toBe(1);
      expect(await third.locator('[data-badge="soft_insertion"]').textContent()).toBe("тип ответа: боковой вопрос");
      expect(await third.locator('[data-detail="rag"] pre').first().textContent()).toContain("2500 рублей");
      expect(await third.locator('[data-detail="prompt"] pre').textContent()).toContain("[ПОДСКАЗКА РОУТЕРА]");
      expect(await page.locator('.msg.assistant[data-done] >> nth=6 >> [data-badge="step"]').textContent()).toBe(
        "Шаг: close",
      );

      // The state panel after the last turn.
      expect(await page.textContent('[data-field="activeBranch"]')).toBe("new_booking");
      expect(await page.textContent('[data-field="step"]')).toBe("close");
      expect(await page.textContent('[data-field="handoffs"]')).toBe("Переключений: 0 из 3");
      const slots = await page.textContent('[data-field="slots"]');
      for (const s of ["name", "Алексей", "reason", "болит ухо", "specialist", "preferred_time", "confirmed"])
        expect(slots).toContain(s);

      // The assembled system prompt of the last turn came through the debug stream.
      expect(await page.locator('#last-debug [data-detail="prompt"] pre').textContent()).toContain("[ШАГ: book");

      // The step machine drawn from its definition, the thread's current step highlighted.
      await page.waitForSelector('#diagram svg g[data-active="true"][data-state$=".close"]', { state: "attached" });
      expect(await page.locator('#diagram svg g.s[data-active="true"]').count()).toBe(1);

      // Every turn of the thread replays from its event log to the stored snapshot.
      await page.waitForSelector('#replay [data-replay="matches"]', { state: "attached" });
      expect(await page.textContent('#replay [data-replay="matches"]')).toContain("событий");

      // The thread as stored agrees with the page.
      const threadId = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get("thread")!;
      const stored = (await (await fetch(`${stack.server.url}/v1/clinic/threads/${threadId}`)).json()) as {
        state: { step: string; slots: Record<string, unknown> };
        messages: unknown[];
      };
      expect(stored.state.step).toBe("close");
      expect(stored.state.slots).toMatchObject({ name: "Алексей", confirmed: true });
      expect(stored.messages).toHaveLength(14);

      // Reloading the page rebuilds the conversation and its badges from the thread.
      await page.reload();
      await page.waitForSelector("body[data-ready]", { state: "attached" });
      expect(await page.locator(".msg.assistant").count()).toBe(7);
      expect(await page.locator('.msg.assistant >> nth=2 >> [data-badge="soft_insertion"]').count()).toBe(1);

      const shot = await screenshot(page, "sandbox-booking");
      expect(existsSync(shot)).toBe(true);
      expect(errors).toEqual([]);
    });
  },
);
