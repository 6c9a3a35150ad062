import { describe, expect, it } from "vitest";
import { hasChromium, openPage, screenshot, skipReason, useBrowserStack } from "./browser";
import { postSse } from "../utils/sse";

/**
 * Инспектор without the hosted Stately UI (issue 17 item 6): the page says so in Russian, hides
 * the broken frame, and its local table still follows the machine events the server relays.
 */

process.env.STATELY_INSPECT = "true";
const stack = useBrowserStack();

describe.skipIf(!hasChromium)(hasChromium ? "e2e: Инспектор offline" : `e2e: Инспектор offline (${skipReason})`, () => {
  it("stately.ai unreachable: a plain Russian notice, no broken frame, the local table moves with each turn", async () => {
    const errors: string[] = [];
    const page = await stack.browser.newPage({ viewport: { width: 1280, height: 900 }, locale: "ru-RU" });
    page.on("pageerror", (e) => errors.push(e.message));
    // The hosted UI cannot be reached (as on a machine without internet).
    await page.route(/stately\.ai/, (r) => r.abort("internetdisconnected"));
    await page.goto(`${stack.server.url}/inspector.html?ui_timeout_ms=1500`);
    await page.waitForSelector("#offline:not([hidden])", { timeout: 10_000 });
    expect(await page.locator("#offline").textContent()).toContain(
      "Интерфейс инспектора Stately (stately.ai) недоступен",
    );
    expect(await page.locator("#inspector").isVisible()).toBe(false);

    const { threadId } = (await (await fetch(`${stack.server.url}/v1/clinic/threads`, { method: "POST" })).json()) as {
      threadId: string;
    };
    stack.llm.script("router", "general_info");
    stack.llm.script("branch", 'Мы на Лесной, 5.\nSTATE_JSON: {"state_after": "answered", "slots_updated": {}}');
    await postSse(`${stack.server.url}/v1/clinic/threads/${threadId}/messages`, { text: "Какой у вас адрес?" });
    const row = page.locator("#actors tr", { hasText: threadId }).first();
    await row.waitFor({ timeout: 10_000 });
    await expect
      .poll(async () => Number(await row.locator("td").nth(3).textContent()), { timeout: 10_000 })
      .toBeGreaterThan(2);
    expect((await row.locator("td").nth(2).textContent())!.length).toBeGreaterThan(0);
    await screenshot(page, "inspector-offline");
    expect(errors).toEqual([]);
    delete process.env.STATELY_INSPECT;
  });
});
