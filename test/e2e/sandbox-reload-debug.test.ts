import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { EMERGENCY_REPLY } from "../../systems/clinic/templates";
import { hasChromium, kbDocument, openPage, skipReason, useBrowserStack } from "./browser";

/** Песочница after a page reload: past turns keep their badges and their debug data (issue 14 items 10, 11, 6). */

const stack = useBrowserStack();

async function say(page: Page, text: string, n: number) {
  await page.fill("#text", text);
  await page.click("#send");
  await page.waitForFunction((k) => document.querySelectorAll(".msg.assistant[data-done]").length >= k, n);
}

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: Песочница — debug data after reload" : `e2e: Песочница reload (${skipReason})`,
  () => {
    it("RAG fragments, the assembled prompt, a malformed-tail badge and the emergency badge survive a reload", async () => {
      await kbDocument(stack, "Адрес", "# Адрес клиники\n\nКлиника находится по адресу: Москва, Лесная улица, 5.");
      stack.llm.script("router", "general_info", "new_booking");
      stack.llm.script(
        "branch",
        "Мы на Лесной улице, 5.",
        'Как вас зовут?\nSTATE_JSON: {"state_after": "intro", "slots_updated": {"name": ',
      );
      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/sandbox.html`, errors);
      await say(page, "Какой у вас адрес?", 1);
      await say(page, "Хочу записаться", 2);
      await say(page, "Сильное кровотечение, не могу дышать", 3);
      const live = page.locator(".msg.assistant[data-done]");
      expect(await live.nth(1).locator('[data-badge="tail_malformed"]').count()).toBe(1);
      expect(await live.nth(2).locator(".text").textContent()).toBe(EMERGENCY_REPLY);

      await page.reload();
      const replies = page.locator(".msg.assistant");
      await expect.poll(() => replies.count()).toBe(3);
      const first = replies.nth(0);
      await first.locator('[data-detail="rag"]').waitFor();
      expect(await first.locator('[data-detail="rag"] pre').first().textContent()).toContain("Лесная улица, 5");
      expect(await first.locator('[data-detail="prompt"] pre').textContent()).toContain("Лесная улица, 5");
      const second = replies.nth(1);
      expect(await second.locator('[data-badge="tail_malformed"]').textContent()).toBe("служебный хвост не разобран");
      expect(await second.locator('[data-badge="tail_malformed"]').getAttribute("title")).toMatch(
        /STATE_JSON malformed/,
      );
      const third = replies.nth(2);
      expect(await third.locator(".text").textContent()).toBe(EMERGENCY_REPLY);
      expect(await third.locator('[data-badge="red_flag"]').count()).toBe(1);
      expect(await third.locator('[data-badge="escalated"]').textContent()).toContain("acute_pain");
      expect(errors).toEqual([]);
    });
  },
);
