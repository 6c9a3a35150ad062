import type { Page } from "playwright-core";

/**
 * What a person at a given width would hit on a page, measured in the page itself: controls too
 * narrow to use, sideways scrolling (the document's or any container's), controls drawn under
 * another element, words broken letter by letter, and — after a step of a flow — the controls the
 * next step needs pushed off the screen.
 */

export interface LayoutDefects {
  narrow: string[];
  overflow: number;
  covered: string[];
  /** Containers whose content is wider than they are and which scroll (or spill) sideways. */
  sideways: string[];
  /** Words of prose (not code) that wrap inside themselves, not at a hyphen: «Э/т/а/п» one letter per line. */
  brokenWords: string[];
}

/** Runs in the page: the defects a person would hit at this width (scrolls each control into view to test it, then back). */
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
      // checkVisibility: false inside a closed <details> (its content is not rendered).
      return (
        r.width > 0 &&
        r.height > 0 &&
        s.visibility !== "hidden" &&
        s.display !== "none" &&
        e.checkVisibility({ contentVisibilityAuto: true })
      );
    };
    const controls = Array.from(document.querySelectorAll("input, textarea, select, button")).filter(
      (e) => visible(e) && !["checkbox", "radio", "hidden", "file", "color"].includes((e as HTMLInputElement).type),
    );
    const narrow = controls
      .filter((e) => e.getBoundingClientRect().width < 60)
      .map((e) => `${name(e)} ${Math.round(e.getBoundingClientRect().width)}px`);
    const overflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;

    // Any element that scrolls sideways (a chart pans by transform inside an overflow:hidden box, so it is not one).
    const sideways: string[] = [];
    for (const e of Array.from(document.querySelectorAll("body *"))) {
      if (e.closest("svg") || !visible(e) || e instanceof HTMLTextAreaElement) continue;
      const s = getComputedStyle(e);
      if ((s.overflowX === "auto" || s.overflowX === "scroll") && e.scrollWidth > e.clientWidth + 1)
        sideways.push(`${name(e)} ${e.scrollWidth - e.clientWidth}px`);
    }

    // A word is letters (a hyphen may join two); it is broken when one letter run of it lies on more than one line.
    const brokenWords: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const parent = n.parentElement;
      if (!parent || parent.closest("svg, script, style, textarea, option") || !visible(parent)) continue;
      // Code (JSON, ids, paths) wraps where it must; prose must not.
      if (/monospace|ui-monospace/.test(getComputedStyle(parent).fontFamily)) continue;
      const text = n.textContent ?? "";
      for (const m of text.matchAll(/\p{L}{2,}/gu)) {
        const range = document.createRange();
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        const tops = new Set(
          Array.from(range.getClientRects())
            .filter((r) => r.width > 0)
            .map((r) => Math.round(r.top)),
        );
        if (tops.size > 1) brokenWords.push(`«${m[0]}» on ${tops.size} lines in ${name(parent)}`);
      }
    }

    const covered: string[] = [];
    const back = Array.from(document.querySelectorAll("*"))
      .filter((e) => e.scrollTop || e.scrollLeft)
      .map((e) => [e, e.scrollTop, e.scrollLeft] as const);
    for (const e of controls) {
      e.scrollIntoView({ block: "center", inline: "center" });
      const r = e.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      if (hit && hit !== e && !e.contains(hit) && !(hit instanceof HTMLLabelElement && hit.control === e))
        covered.push(`${name(e)} under ${name(hit)}`);
    }
    window.scrollTo(0, 0);
    for (const e of Array.from(document.querySelectorAll("*"))) if (e.scrollTop) e.scrollTop = 0;
    for (const [e, top, left] of back) {
      e.scrollTop = top;
      e.scrollLeft = left;
    }
    return { narrow, overflow, covered, sideways, brokenWords };
  });
}

/**
 * Runs in the page, as it is now (nothing is scrolled): each element matched by `selectors` that
 * is not wholly on the screen — outside the window, or clipped by a scrolling ancestor, or drawn
 * under something else. A selector matching nothing is reported too: the flow lost its control.
 */
export function offScreen(page: Page, selectors: string[]): Promise<string[]> {
  return page.evaluate((selectors) => {
    const out: string[] = [];
    const W = document.documentElement.clientWidth;
    const H = document.documentElement.clientHeight;
    for (const sel of selectors) {
      const all = Array.from(document.querySelectorAll(sel)).filter((e) => e.getClientRects().length > 0);
      if (!all.length) out.push(`${sel}: not on the page`);
      for (const e of all) {
        const r = e.getBoundingClientRect();
        let box = { top: 0, left: 0, bottom: H, right: W };
        for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
          const s = getComputedStyle(a);
          if (s.overflowX === "visible" && s.overflowY === "visible") continue;
          const c = a.getBoundingClientRect();
          box = {
            top: Math.max(box.top, c.top),
            left: Math.max(box.left, c.left),
            bottom: Math.min(box.bottom, c.bottom),
            right: Math.min(box.right, c.right),
          };
        }
        const where = `${sel} at ${Math.round(r.left)},${Math.round(r.top)}–${Math.round(r.right)},${Math.round(r.bottom)}`;
        if (r.top < box.top - 1 || r.left < box.left - 1 || r.bottom > box.bottom + 1 || r.right > box.right + 1)
          out.push(
            `${where}: outside the visible ${Math.round(box.left)},${Math.round(box.top)}–${Math.round(box.right)},${Math.round(box.bottom)}`,
          );
        else {
          const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          // The element's own box (an inline run between its lines) is not something drawn over it.
          if (hit && !e.contains(hit) && !hit.contains(e))
            out.push(`${where}: under ${hit.tagName.toLowerCase()}.${hit.className}`);
        }
      }
    }
    return out;
  }, selectors);
}
