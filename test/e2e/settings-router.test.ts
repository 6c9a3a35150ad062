import { describe, expect, it } from "vitest";
import { routerSystemPrompt } from "../../systems/clinic/prompt";
import { hasChromium, openPage, skipReason, useBrowserStack } from "./browser";
import { eventsNamed, postSse } from "../utils/sse";

/** Настройки lists the router's system branch `_router`; a new version edited there is what the router call uses (issue 14 item 8). */

const stack = useBrowserStack();

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: Настройки — the _router system branch" : `e2e: Настройки _router (${skipReason})`,
  () => {
    it("lists _router, edits its prompt as version 2, and the next turn's router call uses it", async () => {
      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/settings.html`, errors);
      await page.waitForSelector('[data-branch="_router"]');
      expect(await page.textContent('[data-branch="_router"]')).toContain("_router · v1 · системная");
      await page.click('[data-branch="_router"]');
      await page.waitForFunction(() => document.querySelector("#branch-panel h2")?.textContent?.includes("_router"));
      // Only a title and a prompt: no rules, exit conditions or knowledge for the router.
      expect(await page.locator("#branch-panel textarea").count()).toBe(1);
      const prompt = page.locator("#branch-panel textarea").first();
      expect(await prompt.inputValue()).toBe(routerSystemPrompt());
      await prompt.fill(`${routerSystemPrompt()}\nВопросы о парковке — general_info.`);
      await page.click("#branch-panel button:has-text('Сохранить как новую версию')");
      await page.waitForFunction(() => document.querySelector("#branch-panel h2")?.textContent?.includes("активна v2"));
      expect(await page.textContent('[data-branch="_router"]')).toContain("v2");

      const thread = (await (
        await fetch(`${stack.server.url}/v1/clinic/threads`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        })
      ).json()) as { threadId: string };
      stack.llm.reset();
      stack.llm.script("router", "general_info");
      stack.llm.script("branch", "Да, парковка бесплатная.");
      const r = await postSse(
        `${stack.server.url}/v1/clinic/threads/${thread.threadId}/messages`,
        { text: "Парковка есть?" },
        { "content-type": "application/json" },
      );
      expect(eventsNamed(r, "final")).toHaveLength(1);
      expect(stack.llm.calls.find((c) => c.role === "router")!.messages[0]!.content).toContain(
        "Вопросы о парковке — general_info.",
      );
      expect(errors).toEqual([]);
    });
  },
);
