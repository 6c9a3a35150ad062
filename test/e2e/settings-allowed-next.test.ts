import { describe, expect, it } from "vitest";
import { eventsNamed, postSse } from "../utils/sse";
import { hasChromium, openPage, screenshot, skipReason, useBrowserStack } from "./browser";

/**
 * Настройки, end to end: an operator allows intro → offer_time in the steps editor (after the
 * guards field refused invalid JSON in place), and the next dialogue takes that jump, which
 * the validator had rejected before; rolling back restores the old rule.
 */

const stack = useBrowserStack();

const JUMP =
  'Здравствуйте, Алексей! Когда вам удобно прийти?\nSTATE_JSON: {"state_after": "offer_time", "slots_updated": {"name": "Алексей"}}';

/** One scripted turn of a fresh thread over the API: the model proposes intro → offer_time. */
async function jumpOverApi() {
  stack.llm.script("router", "new_booking");
  stack.llm.script("branch", JUMP);
  const { threadId } = (await (await fetch(`${stack.server.url}/v1/clinic/threads`, { method: "POST" })).json()) as {
    threadId: string;
  };
  const r = await postSse(`${stack.server.url}/v1/clinic/threads/${threadId}/messages`, {
    text: "Хочу записаться, я Алексей",
  });
  return eventsNamed(r, "final")[0] as { state: { step: string }; events: string[] };
}

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: Настройки — allowed_next edit obeyed by the next dialogue" : `e2e: Настройки (${skipReason})`,
  () => {
    it("rejects the jump, then (after the edit) takes it, then (after rollback) rejects it again", async () => {
      const before = await jumpOverApi();
      expect(before.state.step).toBe("intro");
      expect(before.events).toContain("transition_rejected");

      const errors: string[] = [];
      const page = await openPage(stack.browser, `${stack.server.url}/settings.html#branch=new_booking`, errors);
      await page.waitForSelector('#steps-panel [data-step="intro"]');
      expect(await page.isChecked('[data-step="intro"] input[data-next="qualify"]')).toBe(true);
      expect(await page.isChecked('[data-step="intro"] input[data-next="offer_time"]')).toBe(false);

      // Guards are validated before saving, the error shown under the field, saving blocked.
      const guards = page.locator('textarea[data-guards="qualify"]');
      const original = await guards.inputValue();
      expect(JSON.parse(original)).toHaveProperty("require_legal_rep");
      await guards.fill('{ "require_legal_rep": { "required_slots": [] ');
      expect(await page.textContent('[data-guards-error="qualify"]')).toContain("Это не JSON");
      expect(await page.isDisabled("#save-steps")).toBe(true);
      await guards.fill('{ "require_legal_rep": { "required_slot": ["legal_rep_name"] } }');
      expect(await page.textContent('[data-guards-error="qualify"]')).toContain("неизвестные поля required_slot");
      await page.locator('[data-step="qualify"]').scrollIntoViewIfNeeded();
      await screenshot(page, "settings-guards-error");
      await guards.fill(original);
      expect(await page.textContent('[data-guards-error="qualify"]')).toBe("");
      expect(await page.isDisabled("#save-steps")).toBe(false);

      // The edit: intro may now go straight to offer_time.
      await page.check('[data-step="intro"] input[data-next="offer_time"]');
      await page.click("#save-steps");
      await page.waitForFunction(() => document.querySelector("#steps-panel h2")?.textContent?.includes("активна v2"));
      expect(await page.isChecked('[data-step="intro"] input[data-next="offer_time"]')).toBe(true);
      await page.locator('[data-step="intro"]').scrollIntoViewIfNeeded();
      await screenshot(page, "settings-allowed-next");

      const settings = (await (await fetch(`${stack.server.url}/v1/clinic/branches`)).json()) as {
        stepGraphs: {
          branch: string;
          version: number;
          steps: { code: string; allowed_next: string[]; guards: object }[];
        }[];
      };
      const graph = settings.stepGraphs.find((g) => g.branch === "new_booking")!;
      expect(graph.version).toBe(2);
      expect(graph.steps.find((s) => s.code === "intro")!.allowed_next).toEqual(["intro", "qualify", "offer_time"]);
      expect(graph.steps.find((s) => s.code === "qualify")!.guards).toHaveProperty("require_legal_rep");

      // The next dialogue, in the Sandbox: the same proposal is now a legal move.
      stack.llm.script("router", "new_booking");
      stack.llm.script("branch", JUMP);
      const sandbox = await openPage(stack.browser, `${stack.server.url}/sandbox.html`, errors);
      await sandbox.fill("#text", "Хочу записаться, я Алексей");
      await sandbox.click("#send");
      await sandbox.waitForSelector(".msg.assistant[data-done]", { state: "attached" });
      expect(await sandbox.textContent('[data-field="step"]')).toBe("offer_time");
      expect(await sandbox.locator('[data-badge="rejected"]').count()).toBe(0);
      expect(await sandbox.textContent('[data-badge="step"]')).toBe("Шаг: offer_time");
      // The step diagram is generated from the new graph: the intro → offer_time edge exists and offer_time is lit.
      await sandbox.waitForSelector('#diagram svg g[data-active="true"][data-state$=".offer_time"]', {
        state: "attached",
      });
      expect(await sandbox.locator('#diagram svg g.e[data-source$=".intro"][data-target$=".offer_time"]').count()).toBe(
        1,
      );
      await screenshot(sandbox, "sandbox-after-allowed-next");

      // Rollback in the page restores v1; the jump is rejected again.
      await page.click('#steps-panel tr[data-version="1"] button');
      await page.waitForFunction(() => document.querySelector("#steps-panel h2")?.textContent?.includes("активна v1"));
      const after = await jumpOverApi();
      expect(after.state.step).toBe("intro");
      expect(after.events).toContain("transition_rejected");
      expect(errors).toEqual([]);
    });
  },
);
