// The Workbench answer check against generated lies (issue 31): true answers are the offline
// composer's renderings of context built from the sample workspace (one document, or a folder's
// list); the mutations invent or swap a document, inflate a count (digits and words), and claim an
// edit the Workbench never makes. The table goes to doc/workbench.md.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contextNumbers, numbersIn } from "../../../systems/workbench/answer-numbers";
import type { ModelRequest } from "../../../systems/workbench/model-request";
import { passedIdentities, referencedIdentities } from "../../../systems/workbench/model-request";
import { offlineAnswer } from "../../../systems/workbench/offline-answer";
import { fold } from "../../../systems/workbench/text";
import { validateResponse } from "../../../systems/workbench/validate-response";

type Doc = {
  documentType: string;
  identity: string;
  displayName: string;
  folderIdentity: string | null;
  content: Record<string, unknown>;
};
const sample = JSON.parse(
  readFileSync(new URL("../../../systems/workbench/samples/workspace.json", import.meta.url), "utf8"),
) as { generation: string; documents: Doc[] };
const byId = new Map(sample.documents.map((d) => [d.identity, d]));
const folder = (id: string | null) => {
  const f = id ? byId.get(id) : undefined;
  return f ? { identity: f.identity, displayName: f.displayName } : null;
};
const base = (request: string): Omit<ModelRequest, "context"> => ({
  request,
  plan: { planVersion: 1, tasks: [] },
  conversation: [],
  workspace: { generation: sample.generation, snapshotSha256: "x" },
});
const entityRequest = (d: Doc): ModelRequest => ({
  ...base(`Покажи «${d.displayName}»`),
  context: [
    {
      kind: "entity",
      taskId: "t1",
      identity: d.identity,
      documentType: d.documentType,
      displayName: d.displayName,
      folder: folder(d.folderIdentity),
      content: d.content,
      truncated: false,
    },
  ],
});
const listRequest = (f: Doc, type: string): ModelRequest => {
  const items = sample.documents.filter((d) => d.folderIdentity === f.identity && d.documentType === type);
  return {
    ...base(`Перечисли документы в папке «${f.displayName}»`),
    context: [
      {
        kind: "list",
        taskId: "t1",
        entityType: type,
        folder: { identity: f.identity, displayName: f.displayName },
        items: items.map(({ identity, displayName, documentType, folderIdentity }) => ({
          identity,
          displayName,
          documentType,
          folderIdentity,
        })),
        total: items.length,
      },
    ],
  };
};
const REQUESTS: ModelRequest[] = [
  ...sample.documents.filter((d) => d.documentType !== "Folder").map(entityRequest),
  ...sample.documents
    .filter((d) => d.documentType === "Folder")
    .flatMap((f) => ["Composition", "Form", "Entity", "Report"].map((t) => listRequest(f, t)))
    .filter((r) => r.context[0]!.kind === "list" && r.context[0]!.items.length > 0),
];
const folded = new Set([...byId.keys()].map(fold));
const opts = new Map<ModelRequest, Parameters<typeof validateResponse>[1]>();
const optsOf = (req: ModelRequest) => {
  let o = opts.get(req);
  if (!o)
    opts.set(
      req,
      (o = {
        exists: (id: string) => folded.has(fold(id)),
        passed: passedIdentities(req),
        referenced: referencedIdentities(req),
        numbers: contextNumbers(req),
      }),
    );
  return o;
};

const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
const COUNT_WORDS = ["два", "три", "четыре", "пять", "семь", "десять", "двенадцать", "двадцать три"];
const NOUNS = ["композиции", "форм", "документов", "сущностей", "отчёта", "полей"];
const EDIT_STEMS = ["измен", "обнов", "удал", "переименова", "помен", "исправ", "добав", "сохран", "перенес", "созда"];
const EDIT_ENDINGS = ["ил", "ила", "или", "ен", "ена", "ены", "ал", "ала", "али", "ан", "ана"];
const SUBJECTS = ["Я", "Мы", "Готово:", "По вашей просьбе", "Только что", ""];

export const WB_KINDS = ["invented_document", "swapped_document", "inflated_count", "claimed_edit"] as const;
type Kind = (typeof WB_KINDS)[number];

function mutate(kind: Kind): fc.Arbitrary<{ req: ModelRequest; text: string }> {
  return pick(REQUESTS).chain((req) => {
    const truth = offlineAnswer(req);
    const passed = passedIdentities(req);
    const others = [...byId.keys()].filter((k) => !passed.has(k) && !referencedIdentities(req).has(k));
    const allowed = contextNumbers(req);
    switch (kind) {
      case "invented_document":
        return fc
          .tuple(
            pick(["composition", "form", "report", "entity", "folder"]),
            fc.stringMatching(/^[a-z]{3,10}$/),
            fc.boolean(),
          )
          .map(([p, w, cite]) => ({ req, text: `${truth}\nТакже есть ${cite ? `[[${p}-${w}-x]]` : `${p}-${w}-x`}.` }));
      case "swapped_document":
        return pick(others).map((id) => ({ req, text: truth.replace(/\[\[([^\]]+)\]\]/, `[[${id}]]`) }));
      case "inflated_count":
        return (
          fc
            .tuple(fc.boolean(), fc.integer({ min: 2, max: 40 }), pick(COUNT_WORDS), pick(NOUNS))
            // an inflated count is one the context does not hold
            .filter(([digits, n, w]) => !numbersIn(digits ? String(n) : w).some((x) => allowed.has(x)))
            .map(([digits, n, w, noun]) => ({
              req,
              text: `${truth}\nВсего ${digits ? n : w} ${noun}.`,
            }))
            .filter(({ text }) => text !== truth)
        );
      case "claimed_edit":
        return fc.tuple(pick(SUBJECTS), pick(EDIT_STEMS), pick(EDIT_ENDINGS)).map(([who, stem, end]) => ({
          req,
          text: `${truth}\n${who} ${stem}${end} документ, как вы просили.`.replace("\n ", "\n"),
        }));
    }
  });
}

describe("Workbench answers: the lie generator", () => {
  it("every true (offline) answer passes (0 false refusals)", () => {
    for (const req of REQUESTS)
      expect(validateResponse(offlineAnswer(req), optsOf(req)).issues, req.request).toEqual([]);
    console.log(`true answers: ${REQUESTS.length}, refused: 0`);
  });

  it("refuses each mutation kind in ≥ 99.5 % of 2,000 generated cases", () => {
    const table: { kind: Kind; cases: number; refused: number; rate: string }[] = [];
    for (const kind of WB_KINDS) {
      const cases = fc.sample(mutate(kind), { numRuns: 2000, seed: 31 });
      const escaped = cases.filter(({ req, text }) => validateResponse(text, optsOf(req)).ok);
      const refused = cases.length - escaped.length;
      table.push({ kind, cases: cases.length, refused, rate: `${((100 * refused) / cases.length).toFixed(2)} %` });
      expect(
        refused / cases.length,
        `${kind}: ${escaped
          .slice(0, 3)
          .map((e) => e.text.split("\n").at(-1))
          .join(" | ")}`,
      ).toBeGreaterThanOrEqual(0.995);
    }
    console.table(table);
  }, 120_000);
});
