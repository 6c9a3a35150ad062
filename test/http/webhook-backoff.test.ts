import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { backoffDelay, signWebhook, webhookKey } from "../../http/webhook";

describe("webhook back-off", () => {
  it("doubles from the base, is capped, and jitters within the upper half", () => {
    const at = (attempt: number, r: number) => backoffDelay(attempt, 1_000, 600_000, () => r);
    expect([1, 2, 3, 4].map((a) => at(a, 1))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect([1, 2, 3, 4].map((a) => at(a, 0))).toEqual([500, 1_000, 2_000, 4_000]);
    expect(at(40, 1)).toBe(600_000);
    expect(at(40, 0)).toBe(300_000);
    for (let i = 0; i < 100; i++) {
      const d = backoffDelay(5, 1_000, 600_000);
      expect(d).toBeGreaterThanOrEqual(8_000);
      expect(d).toBeLessThanOrEqual(16_000);
    }
  });

  it("a default horizon of 24 h with a 10 min cap means many attempts through an outage of hours", () => {
    let waited = 0;
    let attempts = 0;
    while (waited < 24 * 3_600_000) waited += backoffDelay(++attempts, 1_000, 600_000, () => 0);
    expect(attempts).toBeGreaterThan(150);
  });
});

describe("Standard Webhooks signature", () => {
  it("verifies with the stock library for a whsec_ secret; a plain secret keys by its bytes", () => {
    const secret = `whsec_${Buffer.from("a-32-byte-secret-for-the-tests!!").toString("base64")}`;
    const body = JSON.stringify({ id: "7", event: "conversation.escalated", seq: 1 });
    const ts = String(Math.floor(Date.now() / 1000));
    const headers = {
      "webhook-id": "7",
      "webhook-timestamp": ts,
      "webhook-signature": signWebhook(secret, "7", ts, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace("1", "2"), headers)).toThrow();
    expect(webhookKey("plain")).toEqual(Buffer.from("plain"));
    expect(signWebhook("plain", "7", ts, body)).toBe(
      `v1,${createHmac("sha256", "plain").update(`7.${ts}.${body}`).digest("base64")}`,
    );
  });
});
