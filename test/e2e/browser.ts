import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import type { ScriptedLlm } from "../utils/scripted-llm";
import { useTestServer, type StartedTestServer } from "../utils/server";

/**
 * Headless Debian Chromium for the page tests (playwright-core drives the system browser; no
 * browser download). `.ci/run` installs the `chromium` package; without it the tests are skipped.
 */
export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);
export const skipReason = `skipped: ${CHROMIUM} not found — install Debian's chromium (apt-get install -y chromium)`;
if (!hasChromium) console.warn(`e2e ${skipReason}`);

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const SHOT_DIR = resolve("test-results", "e2e");

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
}

/** A page that fails the test on any uncaught script error. */
export async function openPage(browser: Browser, url: string, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 960 }, locale: "ru-RU" });
  page.setDefaultTimeout(15_000);
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector("body[data-ready]", { state: "attached" });
  return page;
}

export async function screenshot(page: Page, name: string, fullPage = false): Promise<string> {
  mkdirSync(SHOT_DIR, { recursive: true });
  const path = join(SHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage });
  return path;
}

/**
 * A page of its own browser context (its own localStorage: one operator per context) at `width`
 * px, with the operator's name and, when the server checks API_TOKENS, the token the page sends.
 */
export async function openAt(
  browser: Browser,
  url: string,
  width: number,
  who: { operator?: string | null; token?: string },
  errors: string[],
): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width, height: width < 600 ? 844 : 900 }, locale: "ru-RU" });
  await ctx.addInitScript(
    ({ operator, token }) => {
      if (operator) localStorage.setItem("operatorName", operator);
      if (token) localStorage.setItem("apiToken", token);
    },
    { operator: who.operator ?? null, token: who.token ?? null },
  );
  const page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector("body[data-ready]", { state: "attached" });
  return page;
}

export interface BrowserStack {
  readonly llm: ScriptedLlm;
  readonly server: StartedTestServer;
  readonly browser: Browser;
  /** The test database's URL on a PostgreSQL server (undefined on PGlite): a second server process can share it. */
  readonly dbUrl: string | undefined;
}

/**
 * One file's stack: the test server (its database, a scripted model, `tokens` as API_TOKENS when
 * given) and Chromium — started only when Chromium exists.
 */
export function useBrowserStack(o: { tokens?: string } = {}): BrowserStack {
  const s = useTestServer({ llm: true, tokens: o.tokens, skip: !hasChromium });
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (hasChromium) browser = await launchBrowser();
  });
  // Declared after the server's hooks: the browser closes before the server stops.
  afterAll(async () => {
    await browser?.close();
  });
  return {
    llm: s.llm,
    get server() {
      return s.started;
    },
    get browser() {
      return browser!;
    },
    get dbUrl() {
      return s.dbUrl;
    },
  };
}

/**
 * A new clinic thread the patient escalated to a human («Позовите живого человека»), made through
 * the API with `authorization` when the server's API_TOKENS asks for one: the desk's tests start
 * from it.
 */
export async function escalatedThread(stack: BrowserStack, authorization?: string): Promise<string> {
  const H = { "content-type": "application/json", ...(authorization ? { authorization } : {}) };
  const created = await fetch(`${stack.server.url}/v1/clinic/threads`, { method: "POST", headers: H });
  expect(created.status).toBe(201);
  const { threadId } = (await created.json()) as { threadId: string };
  stack.llm.script("router", "escalate_human");
  stack.llm.script("branch", "Передаю администратору.");
  const res = await fetch(`${stack.server.url}/v1/clinic/threads/${threadId}/messages`, {
    method: "POST",
    headers: H,
    body: JSON.stringify({ text: "Позовите живого человека" }),
  });
  await res.text();
  expect(res.status).toBe(200);
  return threadId;
}

/** A document in the clinic's knowledge base, uploaded through the API: a turn can retrieve from it. */
export async function kbDocument(stack: BrowserStack, title: string, text: string): Promise<void> {
  const up = await fetch(`${stack.server.url}/v1/clinic/kb/documents`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title, text }),
  });
  expect(up.status).toBe(201);
}
