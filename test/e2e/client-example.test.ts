import { resolve } from "node:path";
import { createServer, type ViteDevServer } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, screenshot, skipReason, useBrowserStack } from "./browser";

/**
 * client/example.html (issue 34): the typed client in a browser, served as client/README.md says
 * (vite with client/vite.config.mjs, /v1 proxied to the server), sends a clinic message and
 * prints the streamed tokens.
 */

const stack = useBrowserStack();
let vite: ViteDevServer | undefined;

beforeAll(async () => {
  if (!hasChromium) return;
  process.env.API_URL = stack.server.url;
  vite = await createServer({
    configFile: resolve("client/vite.config.mjs"),
    logLevel: "silent",
    server: { port: 20_000 + Math.floor(Math.random() * 20_000), strictPort: false, hmr: false },
  });
  await vite.listen();
}, 60_000);
afterAll(async () => {
  await vite?.close();
  delete process.env.API_URL;
});

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: client/example.html" : `e2e: client/example.html (${skipReason})`,
  () => {
    it("sends a clinic message through client/ and prints the streamed tokens", async () => {
      const errors: string[] = [];
      const page = await stack.browser.newPage({ viewport: { width: 1000, height: 800 }, locale: "ru-RU" });
      page.on("pageerror", (e) => errors.push(e.message));
      stack.llm.script("router", "general_info");
      stack.llm.script(
        "branch",
        'Мы на Лесной, 5. Ждём вас.\nSTATE_JSON: {"state_after": "answered", "slots_updated": {}}',
      );
      await page.goto(`${vite!.resolvedUrls!.local[0]!.replace(/\/$/, "")}/example.html`);
      await page.click("button");
      await page.waitForFunction(() => document.querySelector("#log")?.textContent?.includes("connections"), null, {
        timeout: 20_000,
      });
      const log = (await page.textContent("#log"))!;
      expect(log).toMatch(/^1 run_started$/m);
      expect(log).toMatch(/ token$/m);
      expect(log).toMatch(/ done$/m);
      expect(await page.textContent("#answer")).toContain("Мы на Лесной, 5.");
      await screenshot(page, "client-example");
      expect(errors).toEqual([]);
    }, 60_000);
  },
);
