import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { hasChromium, screenshot, skipReason, useBrowserStack } from "./browser";
import { clinicApi, stepTail } from "../utils/clinic-api";

/**
 * The clinic statechart on Схемы (issue 45): drawn whole into its box at 1280 px (nothing to scroll
 * sideways), the conversation's state and the transition that brought it there highlighted, the
 * «из любого состояния» transitions one labelled list rather than a fan of edges, and the picture
 * zoomed by the buttons and Ctrl + wheel, moved by dragging, fitted again by «Вписать».
 */

const stack = useBrowserStack();

/** The clinic chart's box, its drawing's box on the screen and the SVG's view box. */
const geometry = (page: Page) =>
  page.evaluate(() => {
    const box = document.querySelector('.diagram[data-machine="clinic-dialogue"]') as HTMLElement;
    const stage = box.querySelector(".diagram-stage") as HTMLElement;
    const svg = stage.querySelector("svg")!;
    const r = (e: Element) => {
      const b = e.getBoundingClientRect();
      return { left: b.left, top: b.top, right: b.right, bottom: b.bottom, width: b.width, height: b.height };
    };
    return {
      stage: r(stage),
      drawing: r(svg.querySelector(":scope > g")!),
      scrolls: stage.scrollWidth > stage.clientWidth || box.scrollWidth > box.clientWidth,
      viewBox: svg.getAttribute("viewBox"),
      scale: Number(box.dataset.scale),
    };
  });

const inside = (a: { left: number; top: number; right: number; bottom: number }, b: typeof a) =>
  a.left >= b.left - 1 && a.top >= b.top - 1 && a.right <= b.right + 1 && a.bottom <= b.bottom + 1;

describe.skipIf(!hasChromium)(
  hasChromium ? "e2e: the clinic statechart" : `e2e: the clinic statechart (${skipReason})`,
  () => {
    it(
      "fits its box at 1280 px, highlights the state and the last transition, zooms, pans and fits again",
      { timeout: 90_000 },
      async () => {
        const c = clinicApi(stack.server.url, "");
        const id = await c.newThread();
        stack.llm.script("router", "new_booking");
        stack.llm.script("branch", `Как к вам обращаться?${stepTail("intro", { specialist: "ЛОР" })}`);
        await c.say(id, "Хочу записаться к ЛОРу");

        const page = await stack.browser.newPage({ viewport: { width: 1280, height: 900 }, locale: "ru-RU" });
        page.setDefaultTimeout(20_000);
        await page.goto(`${stack.server.url}/machines.html#conversation=${id}`);
        const chart = '.diagram[data-machine="clinic-dialogue"]';
        await page.waitForSelector(`${chart} svg g.s[data-active="true"]`, { state: "attached" });
        await page.locator(chart).scrollIntoViewIfNeeded();

        const fitted = await geometry(page);
        expect(fitted.scrolls).toBe(false);
        expect(inside(fitted.drawing, fitted.stage)).toBe(true);
        // Whole, and not a thumbnail: the drawing spans the box's width or its height.
        expect(
          Math.max(fitted.drawing.width / fitted.stage.width, fitted.drawing.height / fitted.stage.height),
        ).toBeGreaterThan(0.9);

        // The current state: the branch and its step; the last transition (an edge, or a line of the group).
        const active = await page
          .locator(`${chart} g.s.active`)
          .evaluateAll((gs) => gs.map((g) => (g as SVGElement).dataset.state));
        expect(active).toEqual(expect.arrayContaining([expect.stringMatching(/\.new_booking$/)]));
        const last = page.locator(`${chart} [data-last="true"]`);
        expect(await last.count()).toBeGreaterThan(0);
        expect(await last.first().getAttribute("data-target")).toMatch(/new_booking/);
        // «из любого состояния»: one labelled group listing its transitions, no edges fanning out of it.
        const group = page.locator(`${chart} g.any`);
        expect(await group.count()).toBe(1);
        expect(await group.locator("text.h").textContent()).toBe("из любого состояния:");
        expect(await group.locator("text.i").count()).toBeGreaterThan(10);
        await screenshot(page, "machines-clinic-fit-1280");

        // Zoom in with the button: bigger than the box now, still no scrollbar.
        await page.click(`${chart} [data-zoom="in"]`);
        await page.click(`${chart} [data-zoom="in"]`);
        const zoomed = await geometry(page);
        expect(zoomed.scale).toBeGreaterThan(fitted.scale * 1.5);
        expect(zoomed.drawing.width).toBeGreaterThan(zoomed.stage.width);
        expect(zoomed.scrolls).toBe(false);

        // Drag moves the picture with the pointer.
        const s = zoomed.stage;
        await page.mouse.move(s.left + s.width / 2, s.top + s.height / 2);
        await page.mouse.down();
        await page.mouse.move(s.left + s.width / 2 - 200, s.top + s.height / 2 - 50, { steps: 5 });
        await page.mouse.up();
        const dragged = await geometry(page);
        expect(Math.round(dragged.drawing.left - zoomed.drawing.left)).toBe(-200);
        expect(Math.round(dragged.drawing.top - zoomed.drawing.top)).toBe(-50);

        // Ctrl + wheel zooms out around the pointer; «К текущему» centres the state; «Вписать» fits again.
        await page.keyboard.down("Control");
        await page.mouse.wheel(0, 300);
        await page.keyboard.up("Control");
        expect((await geometry(page)).scale).toBeLessThan(dragged.scale);
        await page.click(`${chart} [data-zoom="active"]`);
        const focused = await page.evaluate((sel) => {
          const stage = document.querySelector(`${sel} .diagram-stage`)!.getBoundingClientRect();
          const st = Array.from(document.querySelectorAll(`${sel} g.s[data-active="true"]`))
            .at(-1)!
            .getBoundingClientRect();
          return {
            dx: st.left + st.width / 2 - (stage.left + stage.width / 2),
            dy: st.top + st.height / 2 - (stage.top + stage.height / 2),
          };
        }, chart);
        expect(Math.abs(focused.dx)).toBeLessThan(2);
        expect(Math.abs(focused.dy)).toBeLessThan(2);
        await screenshot(page, "machines-clinic-active-1280");
        await page.click(`${chart} [data-zoom="fit"]`);
        expect((await geometry(page)).viewBox).toBe(fitted.viewBox);
        await page.close();
      },
    );

    it("fits a phone's width at 390 px and pans with a finger", { timeout: 60_000 }, async () => {
      const ctx = await stack.browser.newContext({
        viewport: { width: 390, height: 844 },
        hasTouch: true,
        isMobile: true,
        locale: "ru-RU",
      });
      const page = await ctx.newPage();
      await page.goto(`${stack.server.url}/machines.html`);
      const chart = '.diagram[data-machine="clinic-dialogue"]';
      await page.waitForSelector(`${chart} .diagram-stage svg`, { state: "attached" });
      const g = await geometry(page);
      expect(g.scrolls).toBe(false);
      expect(inside(g.drawing, g.stage)).toBe(true);
      expect(await page.locator(`${chart} .diagram-stage`).evaluate((e) => getComputedStyle(e).touchAction)).toBe(
        "none",
      );
      await page.locator(chart).scrollIntoViewIfNeeded();
      await page.screenshot({ path: "test-results/e2e/machines-clinic-fit-390.png" });
      await ctx.close();
    });
  },
);
