import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { beforeAll } from "vitest";
import { hasChromium, screenshot, skipReason, useBrowserStack } from "./browser";
import { clinicApi, stepTail } from "../utils/clinic-api";
import { postSse } from "../utils/sse";
import { workspace } from "../systems/workbench/fixtures";

/**
 * Every operator page at a phone's width (390 px) and a laptop's (1280 px): no field or button
 * narrower than 60 px, no sideways scrolling of the document, and no control drawn under another
 * element (each one's centre, scrolled into view, hits the control itself).
 */

const PAGES = [
  "/",
  "/sandbox.html",
  "/inbox.html",
  "/settings.html",
  "/workbench.html",
  "/machines.html",
  "/api.html",
  "/docs.html",
];
const WIDTHS = [390, 1280];

export interface LayoutDefects {
  narrow: string[];
  overflow: number;
  covered: string[];
}

/** Runs in the page: the defects a person would hit at this width. */
export function layoutDefects(page: Page): Promise<LayoutDefects> {
  return page.evaluate(async () => {
    const name = (e: Element) => {
      const h = e as HTMLElement;
      const label = h.getAttribute("aria-label") ?? h.getAttribute("name") ?? h.textContent?.trim().slice(0, 30) ?? "";
      return `${e.tagName.toLowerCase()}${h.id ? `#${h.id}` : ""}${h.className && typeof h.className === "string" ? `.${h.className.split(" ")[0]}` : ""} «${label}»`;
    };
    const visible = (e: Element) => {
      const r = e.getBoundingClientRect();
      const s = getComputedStyle(e);
      return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
    };
    const controls = Array.from(document.querySelectorAll("input, textarea, select, button")).filter(
      (e) => visible(e) && !["checkbox", "radio", "hidden", "file", "color"].includes((e as HTMLInputElement).type),
    );
    const narrow = controls
      .filter((e) => e.getBoundingClientRect().width < 60)
      .map((e) => `${name(e)} ${Math.round(e.getBoundingClientRect().width)}px`);
    const overflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;
    const covered: string[] = [];
    for (const e of controls) {
      e.scrollIntoView({ block: "center", inline: "center" });
      const r = e.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      if (hit && hit !== e && !e.contains(hit) && !(hit instanceof HTMLLabelElement && hit.control === e))
        covered.push(`${name(e)} under ${name(hit)}`);
    }
    window.scrollTo(0, 0);
    return { narrow, overflow, covered };
  });
}

const stack = useBrowserStack();

/**
 * The same pages holding a conversation (filled in before the tests): a clinic thread an operator
 * took and answered (the inbox's composer, the Sandbox's operator bubble) and a Workbench
 * conversation with a clarification (stage names, candidates, the composer).
 */
const FILLED: Record<string, string> = {};
beforeAll(async () => {
  if (!hasChromium) return;
  const { llm, server } = stack;
  const c = clinicApi(server.url, "");
  const id = await c.newThread();
  llm.script("router", "new_booking");
  llm.script("branch", `Как к вам обращаться?${stepTail("intro", { specialist: "ЛОР" })}`);
  await c.say(id, "Хочу записаться к ЛОРу");
  llm.script("router", "escalate_human");
  llm.script("branch", "[INTENT_CHANGE: escalate_human|explicit_request]", "Передаю администратору.");
  await c.say(id, "Позовите человека");
  await c.take(id, "Мария");
  await c.write(id, "Здравствуйте! Я администратор Мария, помогу с записью к ЛОРу.");
  FILLED["/inbox.html (taken thread)"] = `/inbox.html#id=${id}`;
  FILLED["/sandbox.html (operator answered)"] = `/sandbox.html#thread=${id}`;
  const wb = (await c.json<{ conversationId: string }>(c.post("/v1/workbench/conversations"))).conversationId;
  llm.script("reranker", '{"choice": "clarify"}');
  await postSse(`${server.url}/v1/workbench/conversations/${wb}/messages`, {
    text: "Покажи композицию «Расчёт скидки»",
    workspace,
  });
  FILLED["/workbench.html (clarification)"] = `/workbench.html#conversation=${wb}`;
}, 60_000);

describe.skipIf(!hasChromium)(hasChromium ? "e2e: page layout" : `e2e: page layout (${skipReason})`, () => {
  const names = [
    ...PAGES,
    "/inbox.html (taken thread)",
    "/sandbox.html (operator answered)",
    "/workbench.html (clarification)",
  ];
  for (const width of WIDTHS)
    for (const name of names)
      it(
        `${name} at ${width} px: fields ≥ 60 px, no sideways scroll, nothing covered`,
        { timeout: 60_000 },
        async () => {
          const path = FILLED[name] ?? name;
          const page = await stack.browser.newPage({ viewport: { width, height: 844 }, locale: "ru-RU" });
          await page.route(/stately\.ai/, (r) => r.abort("internetdisconnected"));
          await page.goto(`${stack.server.url}${path}`);
          await page.waitForSelector("body[data-ready]", { state: "attached" });
          await page.waitForTimeout(500);
          const d = await layoutDefects(page);
          await screenshot(page, `layout-${name.replace(/\W+/g, "") || "debug"}-${width}`, true);
          await page.close();
          expect(d).toEqual({ narrow: [], overflow: 0, covered: [] });
        },
      );
});
