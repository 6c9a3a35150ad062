import { describe, expect, it } from "vitest";
import { chunkDocument, MAX_CHUNK_CHARS } from "../../../systems/clinic/kb-chunk";

describe("chunkDocument", () => {
  it("splits by heading and keeps each chunk under the limit, losing no text", () => {
    const body =
      "Вступление.\n\n## Часы работы\nЕжедневно с 8:00 до 21:00.\n\n## Цены\n" +
      "Приём терапевта 2500 рублей. ".repeat(60);
    const chunks = chunkDocument("Справка", body);
    expect(chunks[0]).toEqual({ ord: 0, heading: "Справка", text: "Вступление." });
    expect(chunks[1]).toMatchObject({ heading: "Часы работы", text: "Ежедневно с 8:00 до 21:00." });
    expect(chunks.slice(2).every((c) => c.heading === "Цены")).toBe(true);
    expect(chunks.every((c) => c.text.length <= MAX_CHUNK_CHARS)).toBe(true);
    expect(chunks.map((c) => c.ord)).toEqual(chunks.map((_, i) => i));
    const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
    expect(chunks.reduce((n, c) => n + words(c.text), 0)).toBe(words(body.replace(/^##.*$/gm, "")));
  });

  it("cuts a single overlong sentence hard instead of dropping it", () => {
    const chunks = chunkDocument("Д", "а".repeat(2000));
    expect(chunks.map((c) => c.text.length)).toEqual([700, 700, 600]);
  });
});
