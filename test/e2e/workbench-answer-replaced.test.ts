import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { workspace } from "../systems/workbench/fixtures";
import { hasChromium, openPage, screenshot, skipReason, useBrowserStack } from "./browser";

/**
 * The validated stream on the Workbench page (doc/streaming.md): an answer the server rejects is
 * replaced in the bubble by `answer_replaced`; every text the bubble ever showed is recorded, and
 * the rejected claim is in none of them — nor in what the page ends with.
 */

const stack = useBrowserStack();

/** Records every distinct text the newest assistant bubble's `.text` shows as the DOM changes. */
async function recordBubbles(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { shown: string[] };
    w.shown = [];
    const grab = () => {
      // The bubble being written is the last one; earlier ones no longer change.
      const t = Array.from(document.querySelectorAll("#messages .msg.assistant .text")).at(-1);
      const s = t?.textContent ?? "";
      if (t && w.shown.at(-1) !== s) w.shown.push(s);
    };
    new MutationObserver(grab).observe(document.querySelector("#messages")!, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
}

const shown = (page: Page) => page.evaluate(() => (window as unknown as { shown: string[] }).shown);

async function sendAndWait(page: Page, text: string, n: number) {
  await page.fill("#text", text);
  await page.click("#send");
  await page.waitForFunction((k) => document.querySelectorAll(".msg.assistant[data-done]").length >= k, n);
  return page.locator(".msg.assistant[data-done]").nth(n - 1);
}

describe.skipIf(!hasChromium)(
  hasChromium
    ? "e2e: Workbench page — a rejected answer is replaced"
    : `e2e: Workbench answer_replaced (${skipReason})`,
  () => {
    it("a claimed edit mid-answer never shows; a whole-text rejection is taken back; a passing answer stays as streamed; a broken stream leaves no partial text", async () => {
      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/workbench.html`, errors);
      await page.fill("#workspace", JSON.stringify(workspace, null, 2));
      await recordBubbles(page);

      // 1. The first sentence passes and streams; the second claims an edit and is never released.
      stack.llm.script("answer", {
        content:
          "Композиция [[composition-alpha]] лежит в папке «Продажи».\nГотово: я изменил формулу скидки в ней. Проверьте результат.",
        chunkDelayMs: 15,
      });
      const first = await sendAndWait(page, "Покажи composition-alpha", 1);
      const seen1 = await shown(page);
      // The passing sentence did reach the page as tokens (the recorder sees the stream)…
      expect(seen1.some((s) => s.startsWith("Композиция [[composition-alpha]] лежит"))).toBe(true);
      // …the claim never did, at any moment.
      for (const s of seen1) expect(s).not.toContain("я изменил");
      const text1 = (await first.locator(".text").textContent())!;
      expect(text1).toMatch(/^Ответ модели не прошёл автоматическую проверку/);
      expect(text1).toContain("composition-alpha");
      expect(text1).not.toContain("лежит в папке «Продажи».\n");
      expect(await first.getAttribute("data-replaced")).toBe("true");
      expect(await first.textContent()).toContain("ответ модели заменён");
      expect(await first.textContent()).toContain("проверка: ");
      // Stage 12's line says why, by code (the rejected text itself only inside its collapsed data).
      expect(await first.locator("details.stage[data-stage='12'] summary").textContent()).toContain(
        "не пройдена · claimed_change · ответ заменён",
      );
      await screenshot(page, "workbench-answer-replaced");

      // 2. Every sentence passes alone, so all of it streams; the whole is raw JSON: the page must
      //    end without it.
      stack.llm.script("answer", {
        content: '{"answer": "Композиция [[composition-alpha]] проверена. Она в папке «Продажи»."}',
        chunkDelayMs: 15,
      });
      const second = await sendAndWait(page, "Покажи composition-alpha", 2);
      const seen2 = (await shown(page)).slice(seen1.length);
      // What streamed before the end was shown (the last sentence and the replacement may land in one
      // task, so the recorder need not see the tail)…
      expect(seen2.some((s) => s.startsWith('{"answer": "Композиция [[composition-alpha]] проверена.'))).toBe(true);
      // …and taken back: the bubble ends with the replacement only.
      const text2 = (await second.locator(".text").textContent())!;
      expect(text2).not.toContain('{"answer"');
      expect(text2).toMatch(/^Ответ модели не прошёл автоматическую проверку/);

      // 3. A passing answer: streamed and final text agree, no replacement badge.
      stack.llm.script("answer", {
        content: "Композиция [[composition-alpha]] лежит в папке [[folder-sales]]. Других с этим именем нет.",
        chunkDelayMs: 5,
      });
      const third = await sendAndWait(page, "Покажи composition-alpha", 3);
      expect(await third.locator(".text").textContent()).toBe(
        "Композиция composition-alpha лежит в папке folder-sales. Других с этим именем нет.",
      );
      expect(await third.getAttribute("data-replaced")).toBeNull();
      expect(await third.textContent()).toContain("проверка ответа пройдена");

      const before4 = (await shown(page)).length;
      // 4. The model's stream breaks after a sentence was shown: an error, and the partial text goes.
      stack.llm.script("answer", {
        content:
          "Композиция [[composition-alpha]] лежит в папке «Продажи».\nОна считает скидку по сумме заказа и ещё многое другое.",
        truncateAfter: 64,
      });
      const fourth = await sendAndWait(page, "Покажи composition-alpha", 4);
      const seen4 = (await shown(page)).slice(before4);
      expect(seen4.some((s) => s.startsWith("Композиция [[composition-alpha]] лежит"))).toBe(true);
      expect(await fourth.locator(".text").textContent()).toBe("");
      expect(await fourth.locator(".error-box").textContent()).toContain("model_unavailable");

      // The reload shows the stored answers: the replacements, never the rejected text.
      await page.reload();
      await page.waitForSelector("body[data-ready]", { state: "attached" });
      await page.waitForFunction(() => document.querySelectorAll("#messages .msg.assistant").length >= 3);
      const stored = await page.locator("#messages .msg.assistant").allTextContents();
      expect(stored.join("\n")).not.toContain("я изменил");
      expect(stored.join("\n")).not.toContain('{"answer"');
      expect(errors).toEqual([]);
    });
  },
);
