import { describe, expect, it } from "vitest";
import { GuardSpec } from "../../../systems/clinic/types";
import { z } from "zod";

/** The Settings page checks guards JSON before saving; it must agree with the server's schema. */

type Parse = (text: string) => { ok: true; value: Record<string, unknown> } | { ok: false; error: string };
const modulePath = "../../../http/static/assets/guards.js";
const { parseGuards } = (await import(/* @vite-ignore */ modulePath)) as { parseGuards: Parse };
const server = z.record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/), GuardSpec.strict());

describe("parseGuards (Настройки, before saving)", () => {
  const cases: [string, boolean, string?][] = [
    ["", true],
    ["{}", true],
    [
      '{"require_legal_rep": {"description": "…", "trigger_slot": "is_child", "trigger_value": true, "required_slots": ["legal_rep_name", "legal_rep_phone"]}}',
      true,
    ],
    ['{"always": {"required_slots": ["name"]}}', true],
    ["{ oops", false, "Это не JSON"],
    ["[]", false, "Ожидается JSON-объект"],
    ['{"Bad-Name": {"required_slots": ["x"]}}', false, "Имя условия"],
    ['{"g": {"required_slots": []}}', false, "g.required_slots: нужен непустой список"],
    ['{"g": {"required_slot": ["x"]}}', false, "неизвестные поля required_slot"],
    ['{"g": {"required_slots": ["Name"]}}', false, "не имя слота"],
    ['{"g": {"required_slots": ["x"], "trigger_slot": 5}}', false, "trigger_slot"],
    ['{"g": {"required_slots": ["x"], "description": 1}}', false, "description"],
  ];
  for (const [text, ok, message] of cases) {
    it(`${ok ? "accepts" : "refuses"} ${text || "(empty)"}`, () => {
      const r = parseGuards(text);
      expect(r.ok).toBe(ok);
      if (!r.ok) expect(r.error).toContain(message);
      // Whatever the page lets through, the server's schema accepts too.
      if (r.ok) expect(server.safeParse(r.value).success).toBe(true);
      else if (text.trim().startsWith("{") && !message!.includes("JSON"))
        expect(server.safeParse(JSON.parse(text)).success).toBe(false);
    });
  }
});
