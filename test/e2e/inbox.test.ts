import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../utils/server";
import { eventsNamed, postSse } from "../utils/sse";
import { useWebhookReceiver, testWebhookSecret, verifyDelivery } from "../utils/webhook-receiver";
import { hasChromium, launchBrowser, openPage, screenshot, skipReason } from "./browser";

/** «Обращения» end to end: an escalation appears first, is taken, held, released, closed; the webhook receiver gets it signed. */

const SECRET = testWebhookSecret("e2e-secret");
let browser: Browser;

const hook = useWebhookReceiver();
const server = useTestServer({
  llm: true,
  env: () => ({ WEBHOOK_URL: hook.url, WEBHOOK_SECRET: SECRET, WEBHOOK_BACKOFF_MS: "50", WEBHOOK_MAX_ATTEMPTS: "4" }),
});
const llm = server.llm;
beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const H = { "content-type": "application/json" };
async function thread(): Promise<string> {
  return (
    (await (await fetch(`${server.url}/v1/clinic/threads`, { method: "POST", headers: H, body: "{}" })).json()) as {
      threadId: string;
    }
  ).threadId;
}
const say = async (id: string, text: string) =>
  eventsNamed(await postSse(`${server.url}/v1/clinic/threads/${id}/messages`, { text }, H), "final")[0] as {
    reply: string;
    events: string[];
  };
const item = (page: Page, id: string) => page.locator(`.inbox-item[data-id="${id}"]`);

describe.skipIf(!hasChromium)(hasChromium ? "e2e: «Обращения»" : `e2e: «Обращения» (${skipReason})`, () => {
  it("an escalation appears first with reason and contact; take holds the patient, release hands back, close ends it; one signed webhook, retried", async () => {
    const calm = await thread();
    llm.script("router", "general_info");
    llm.script("branch", "Мы работаем с 8 до 20.");
    await say(calm, "Когда вы работаете?");
    hook.failNext(502);
    const id = await thread();
    llm.script("router", "escalate_human");
    llm.script("branch", "Передаю ваш вопрос администратору.");
    expect((await say(id, "Позовите администратора")).reply).toContain("номер телефона");
    llm.script("router", "escalate_human");
    llm.script("branch", "Спасибо!");
    await say(id, "8 916 123-45-67");

    const errors: string[] = [];
    const page = await openPage(browser, `${server.url}/inbox.html`, errors);
    await page.waitForSelector(".inbox-item");
    expect(await page.locator(".inbox-item").first().getAttribute("data-id")).toBe(id);
    expect(await item(page, id).locator('[data-badge="reason"]').textContent()).toBe(
      "ждёт человека · просьба пациента",
    );
    expect(await item(page, id).locator('[data-badge="contact"]').textContent()).toBe("+79161234567");
    expect(await item(page, calm).locator('[data-badge="reason"]').count()).toBe(0);
    await page.check("#escalated");
    await expect.poll(() => page.locator(".inbox-item").count()).toBe(1);
    await page.uncheck("#escalated");
    await expect.poll(() => page.locator(".inbox-item").count()).toBe(2);

    await item(page, id).click();
    await page.waitForSelector("#transcript .msg.user");
    expect(await page.locator('[data-field="contact"]').textContent()).toBe("+79161234567");
    expect(await page.locator("#transcript").textContent()).toContain("Позовите администратора");
    await page.click("#take");
    await expect.poll(() => page.locator('[data-field="status"]').textContent()).toContain("у оператора");
    const calls = llm.calls.length;
    expect((await say(id, "Алло?")).events).toEqual(["held_by_operator"]);
    expect(llm.calls.length).toBe(calls);
    await page.click("#refresh");
    await expect.poll(() => page.locator("#transcript").textContent()).toContain("ответит вам здесь, в этом чате");
    await screenshot(page, "inbox-taken");
    await page.click("#release");
    await expect.poll(() => page.locator('[data-field="status"]').textContent()).toBe("у бота");
    expect(await page.locator('[data-field="escalated"]').textContent()).toBe("нет");
    // The list is reloaded after the detail (inbox.js `act`): waited for, not read at once.
    await expect.poll(() => item(page, id).getAttribute("data-escalated")).toBe("false");
    await page.click("#close");
    await expect.poll(() => page.locator('[data-field="status"]').textContent()).toBe("закрыт");
    await expect.poll(() => item(page, id).getAttribute("data-status")).toBe("closed");

    // The receiver: one escalation → one delivery id, the 502 retried, every attempt signed; the
    // operator's actions (taken, released, closed) arrive as their own events.
    const escalations = () => hook.deliveries.filter((d) => d.json.event === "conversation.escalated");
    await expect.poll(() => escalations().filter((d) => d.status === 200).length, { timeout: 5_000 }).toBe(1);
    expect(escalations().map((d) => d.status)).toEqual([502, 200]);
    expect(new Set(escalations().map((d) => d.headers["webhook-id"])).size).toBe(1);
    await expect
      .poll(() => hook.deliveries.filter((d) => d.status === 200).map((d) => d.json.event), { timeout: 5_000 })
      .toEqual(
        expect.arrayContaining([
          "conversation.escalated",
          "conversation.taken",
          "conversation.released",
          "conversation.closed",
        ]),
      );
    for (const d of hook.deliveries) {
      // Standard Webhooks, verified by the stock library.
      expect(verifyDelivery(SECRET, d)).toEqual(d.json);
      expect(d.json).toMatchObject({ conversationId: id });
    }
    for (const d of escalations()) expect(d.json).toMatchObject({ reason: "explicit_request" });
    // The take still names the reason the operator took it for.
    expect(hook.deliveries.find((d) => d.json.event === "conversation.taken")!.json).toMatchObject({
      reason: "explicit_request",
    });
    expect(errors).toEqual([]);
  });

  it("a dead letter is listed on the page and sent again from it: delivered once, with its id and seq", async () => {
    // WEBHOOK_MAX_ATTEMPTS=4: four failures make the escalation a dead letter.
    hook.failNext(500, 500, 500, 500);
    const id = await thread();
    llm.script("router", "escalate_human");
    llm.script("branch", "Передаю ваш вопрос администратору.");
    await say(id, "Позовите администратора");
    const mine = () => hook.deliveries.filter((d) => d.json.conversationId === id);
    await expect.poll(() => mine().length, { timeout: 10_000 }).toBe(4);
    await expect
      .poll(
        async () =>
          ((await (await fetch(`${server.url}/v1/webhooks/dead-letters`)).json()) as { deadLetters: unknown[] })
            .deadLetters.length,
      )
      .toBe(1);

    const errors: string[] = [];
    const page = await openPage(browser, `${server.url}/inbox.html`, errors);
    const section = page.locator("#dead-letters");
    await expect.poll(() => section.locator("h3").textContent()).toBe("Недоставленные вебхуки: 1");
    expect(await section.textContent()).toContain(id);
    await screenshot(page, "inbox-dead-letter");
    await section.locator("button", { hasText: "Отправить снова" }).click();
    await expect.poll(() => section.locator("h3").count()).toBe(0);
    await expect.poll(() => mine().filter((d) => d.status === 200).length, { timeout: 10_000 }).toBe(1);
    const ids = new Set(mine().map((d) => d.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    expect(mine().map((d) => d.json.seq)).toEqual([1, 1, 1, 1, 1]);
    expect(errors).toEqual([]);
  });

  it("a new escalation appears on an open page at once, not at the list's 10 s poll", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, `${server.url}/inbox.html`, errors);
    await page.waitForFunction(() => document.body.dataset.ready === "true");
    const id = await thread();
    llm.script("router", "escalate_human");
    llm.script("branch", "Передаю ваш вопрос администратору.");
    await say(id, "Позовите администратора");
    // Well inside the poll's 10 s: the desk stream's `handling` news drew the list again.
    // Read without waiting (getAttribute would wait for a row to appear, past the poll's timeout).
    const first = () =>
      page.locator(".inbox-item").evaluateAll((ns) => (ns[0] as HTMLElement | undefined)?.dataset.id ?? null);
    await expect.poll(first, { timeout: 4_000 }).toBe(id);
    expect(await item(page, id).getAttribute("data-escalated")).toBe("true");
    expect(errors).toEqual([]);
  });

  it("erasing from the page removes the conversation", async () => {
    const id = await thread();
    llm.script("router", "general_info");
    llm.script("branch", "Адрес: ул. Ленина, 1.");
    await say(id, "Где вы находитесь?");
    const errors: string[] = [];
    const page = await openPage(browser, `${server.url}/inbox.html#id=${id}`, errors);
    await page.waitForSelector("#erase");
    page.once("dialog", (d) => void d.accept());
    await page.click("#erase");
    await expect.poll(() => page.locator("#detail").textContent()).toBe("Диалог удалён.");
    // The list is reloaded after the detail says so: on a busy machine that reload lands a moment later.
    await expect.poll(() => item(page, id).count()).toBe(0);
    expect((await fetch(`${server.url}/v1/inbox/conversations/${id}`)).status).toBe(404);
    expect(errors).toEqual([]);
  });
});
