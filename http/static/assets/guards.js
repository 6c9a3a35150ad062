// Client-side check of a step's guards JSON, before it is sent: the same rules as clinic/types.ts GuardSpec.

const CODE = /^[a-z][a-z0-9_]{0,63}$/;
const KNOWN = new Set(["description", "trigger_slot", "trigger_value", "required_slots"]);

/** Returns {ok: true, value} or {ok: false, error} with a message in Russian naming the place. */
export function parseGuards(text) {
  if (!text.trim()) return { ok: true, value: {} };
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `Это не JSON: ${e.message}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return { ok: false, error: 'Ожидается JSON-объект: { "имя_условия": { … } }.' };
  for (const [name, g] of Object.entries(value)) {
    if (!CODE.test(name))
      return { ok: false, error: `Имя условия «${name}»: только латиница в нижнем регистре, цифры и _.` };
    if (g === null || typeof g !== "object" || Array.isArray(g))
      return { ok: false, error: `${name}: ожидается объект.` };
    const unknown = Object.keys(g).filter((k) => !KNOWN.has(k));
    if (unknown.length)
      return {
        ok: false,
        error: `${name}: неизвестные поля ${unknown.join(", ")} (допустимы: ${[...KNOWN].join(", ")}).`,
      };
    if (!Array.isArray(g.required_slots) || g.required_slots.length === 0)
      return { ok: false, error: `${name}.required_slots: нужен непустой список слотов.` };
    const bad = g.required_slots.find((s) => typeof s !== "string" || !CODE.test(s));
    if (bad !== undefined) return { ok: false, error: `${name}.required_slots: «${bad}» — не имя слота.` };
    if (g.trigger_slot !== undefined && (typeof g.trigger_slot !== "string" || !CODE.test(g.trigger_slot)))
      return { ok: false, error: `${name}.trigger_slot: ожидается имя слота.` };
    if (g.description !== undefined && typeof g.description !== "string")
      return { ok: false, error: `${name}.description: ожидается строка.` };
  }
  return { ok: true, value };
}
