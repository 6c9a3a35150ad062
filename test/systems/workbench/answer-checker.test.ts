import { describe, expect, it } from "vitest";
import { ValidatedStream } from "../../../driver/validated-stream";
import {
  gatedValidation,
  REJECTED_NOTICE,
  replacementAnswer,
  workbenchAnswerChecker,
} from "../../../systems/workbench/answer-checker";
import type { ModelRequest } from "../../../systems/workbench/model-request";
import { validateResponse } from "../../../systems/workbench/validate-response";

const opts = {
  exists: (id: string) => ["composition-alpha", "composition-beta", "folder-sales"].includes(id),
  passed: new Set(["composition-alpha", "folder-sales"]),
};

function gate(deltas: string[]) {
  const checker = workbenchAnswerChecker(opts);
  const released: string[] = [];
  const g = new ValidatedStream(checker, (d) => released.push(d));
  deltas.forEach((d) => g.push(d));
  const result = g.end();
  return { result, released: released.join(""), checker };
}

const request = (text: string, content: Record<string, unknown> = {}): ModelRequest => ({
  request: text,
  plan: { planVersion: 1, tasks: [] },
  context: [
    {
      kind: "entity",
      documentType: "Composition",
      identity: "composition-alpha",
      displayName: "Объект Альфа",
      folder: { identity: "folder-sales", displayName: "Продажи" },
      content,
    } as never,
  ],
  conversation: [],
  workspace: { generation: "g1", snapshotSha256: "x" },
});

describe("the Workbench answer checker (stage 12 on the stream)", () => {
  it("rejects a sentence with an identity not passed, or a claimed edit, and keeps the structured issue", () => {
    const a = gate(["Это [[composition-alpha]]. ", "Смотрите также [[composition-be", "ta]]. Конец."]);
    expect(a.released).toBe("Это [[composition-alpha]]. ");
    expect(a.result.ok).toBe(false);
    expect(a.checker.rejected).toEqual([{ code: "not_in_context", detail: "composition-beta" }]);
    const b = gate(["Готово: я изменил формулу.\n", "Ещё текст."]);
    expect(b.released).toBe("");
    expect(b.checker.rejected.map((i) => i.code)).toEqual(["claimed_change"]);
  });

  it("leaves whole-text checks (empty, JSON, a citation cut by a boundary) to the end", () => {
    const cut = gate(["Документ [[composition. ", "alpha]] важен."]);
    expect(cut.released).toBe("Документ [[composition. alpha]] важен.");
    expect(cut.result.ok).toBe(false);
    expect(gate(['{"a": 1}']).checker.rejected.map((i) => i.code)).toEqual(["raw_json"]);
    expect(gate(["Всё в порядке [[composition-alpha]]."]).result.ok).toBe(true);
  });

  it("the final validation joins the whole-text issues and the gate's, each once", () => {
    const text = "Это [[composition-beta]].";
    const v = gatedValidation(text, opts, [
      { code: "not_in_context", detail: "composition-beta" },
      { code: "claimed_change", detail: "x" },
    ]);
    expect(v.issues).toEqual([
      { code: "not_in_context", detail: "composition-beta" },
      { code: "claimed_change", detail: "x" },
    ]);
    expect(v.ok).toBe(false);
  });

  it("the replacement passes validation itself; what it quotes that fails is left out, else the notice", () => {
    const ok = replacementAnswer(request("Покажи composition-alpha"), opts);
    expect(ok).toMatch(/^Ответ модели не прошёл автоматическую проверку/);
    expect(ok).toContain("По запросу «Покажи composition-alpha»:");
    expect(ok).toContain("[[composition-alpha]]");
    expect(validateResponse(ok, opts).ok).toBe(true);
    // The user's words read like a claim: the heading quoting them goes, the data stays.
    const claim = replacementAnswer(request("Скажи, что я изменил формулу"), opts);
    expect(claim).not.toContain("я изменил");
    expect(claim).toContain("[[composition-alpha]]");
    expect(validateResponse(claim, opts).ok).toBe(true);
    // A document's description that reads like a claim: that sentence goes, the document stays.
    const described = replacementAnswer(
      request("Покажи composition-alpha", { description: "Я изменил эту композицию вчера." }),
      opts,
    );
    expect(described).not.toContain("Я изменил");
    expect(described).toContain("- Композиция «Объект Альфа» [[composition-alpha]] (папка «Продажи»).");
    expect(validateResponse(described, opts).ok).toBe(true);
    // Nothing of the context can be shown: the plain notice, which passes too.
    const none = replacementAnswer({ ...request("Покажи"), context: [] }, opts);
    expect(none).toBe(REJECTED_NOTICE);
    expect(validateResponse(REJECTED_NOTICE, opts).ok).toBe(true);
  });
});
