import { describe, expect, it } from "vitest";
import { workspace } from "../systems/workbench/fixtures";
import { hasChromium, openPage, screenshot, skipReason, useBrowserStack } from "./browser";

/**
 * Workbench console, end to end: a workspace snapshot pasted into the page, an ambiguous request,
 * the clarification's candidates as buttons, a click, and the answer — each run's stages listed.
 */

const stack = useBrowserStack();

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: Workbench console — clarification answered by a click" : `e2e: Workbench console (${skipReason})`,
  () => {
    it("asks which composition, takes the clicked candidate, answers citing it; the interaction machine shows completed", async () => {
      stack.llm.script("reranker", '{"choice": "clarify"}');
      stack.llm.script("answer", "Архивная версия: [[composition-discount-v1]] — старая версия расчёта скидки.");
      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/workbench.html`, errors);
      await page.fill("#workspace", JSON.stringify(workspace, null, 2));

      await page.fill("#text", "Покажи композицию «Расчёт скидки»");
      await page.click("#send");
      const question = page.locator(".msg.assistant[data-clarification]");
      await question.waitFor();
      expect(await question.locator("b").first().textContent()).toBe("Какую композицию вы имеете в виду?");
      const buttons = question.locator(".candidates button");
      expect(await buttons.count()).toBe(2);
      expect((await buttons.evaluateAll((bs) => bs.map((b) => (b as HTMLElement).dataset.identity))).sort()).toEqual([
        "composition-discount",
        "composition-discount-v1",
      ]);
      // The first run's stages are listed under it, 00 to 12.
      await page.waitForSelector(".msg.assistant[data-done] .run-stages", { state: "attached" });
      const firstStages = await page
        .locator(".msg.assistant[data-done] >> nth=0 >> details.stage")
        .evaluateAll((ds) => ds.map((d) => (d as HTMLElement).dataset.stage));
      expect(firstStages).toEqual(["00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"]);
      expect(
        await page.textContent(".msg.assistant[data-done] >> nth=0 >> details.stage[data-stage='06'] summary"),
      ).toContain("ambiguous");
      await page.waitForSelector('#diagram svg g[data-active="true"][data-state$=".awaiting_clarification"]', {
        state: "attached",
      });
      await screenshot(page, "workbench-clarification-asked");

      await question.locator('button[data-identity="composition-discount-v1"]').click();
      await page.waitForFunction(() => document.querySelectorAll(".msg.assistant[data-done]").length >= 2);
      const answer = page.locator(".msg.assistant[data-done]").nth(1);
      expect(await answer.locator(".text").textContent()).toBe(
        "Архивная версия: composition-discount-v1 — старая версия расчёта скидки.",
      );
      expect(await answer.locator(".text .badge").textContent()).toBe("composition-discount-v1");
      expect(await answer.textContent()).toContain("проверка ответа пройдена");
      expect(await answer.locator("details.stage[data-stage='07'] pre").textContent()).toContain(
        '"decidedBy": "click"',
      );
      // Both candidate buttons are spent: the clarification is answered.
      expect(await question.locator(".candidates button:disabled").count()).toBe(2);
      expect(await page.isHidden("#reply-mode")).toBe(true);
      await page.waitForSelector('#diagram svg g[data-active="true"][data-state$=".completed"]', { state: "attached" });

      // The stack.server agrees: one clarification, answered by the clicked candidate; plan version 2.
      const interactionId = (await page.getAttribute("#interaction-status", "data-interaction"))!;
      const it1 = (await (await fetch(`${stack.server.url}/v1/workbench/interactions/${interactionId}`)).json()) as {
        status: string;
        planVersion: number;
        clarifications: { status: string }[];
      };
      expect(it1).toMatchObject({ status: "completed", planVersion: 2 });
      expect(it1.clarifications.map((c) => c.status)).toEqual(["answered"]);
      const calls = stack.llm.calls.map((c) => c.role);
      expect(calls).toEqual(["reranker", "answer"]);
      await screenshot(page, "workbench-clarification-answered");
      expect(errors).toEqual([]);
    });
  },
);
