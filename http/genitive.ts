import { createRequire } from "node:module";

/**
 * A person's name in the genitive, for «открыто у Ивана» (issue 43 presence): Russian morphology
 * from OpenCorpora's dictionaries (the `az` package). The dictionaries load once, in the
 * background, on the first call; until then — and for a word they do not know (a Latin name, a
 * nickname) — the name stays as written, which reads acceptably («открыто у John»).
 */

interface Parse {
  tag: Record<string, unknown>;
  inflect(grammemes: Record<string, boolean>): { word: string } | false | undefined;
}
interface AzModule {
  Morph: ((word: string) => Parse[]) & { init(dir: string, done: (err?: unknown) => void): void };
}

let state: "idle" | "loading" | "ready" | "failed" = "idle";
let az: AzModule | null = null;

function load(): void {
  if (state !== "idle") return;
  state = "loading";
  try {
    const require = createRequire(import.meta.url);
    az = require("az") as AzModule;
    const dicts = require.resolve("az/package.json").replace(/package\.json$/, "dicts");
    az.Morph.init(dicts, (err) => (state = err ? "failed" : "ready"));
  } catch {
    state = "failed";
  }
}

function wordGenitive(word: string): string {
  // Patronymics by rule: the dictionary's inflection of them drops the suffix («Ильич» → «Ильи»).
  if (/(вич|ьич|Ильич)$/i.test(word) && /^\p{Lu}/u.test(word)) return `${word}а`;
  if (/(овна|евна|ична|инична)$/i.test(word) && /^\p{Lu}/u.test(word)) return `${word.slice(0, -1)}ы`;
  const parses = az!.Morph(word);
  // A patronymic, a first name, a surname — in that order; else whatever the dictionary says first.
  const p =
    parses.find((x) => x.tag.Patr) ?? parses.find((x) => x.tag.Name) ?? parses.find((x) => x.tag.Surn) ?? parses[0];
  const g = p?.inflect({ gent: true });
  if (!g || !g.word) return word;
  // The dictionary answers in lower case: keep the name's own capitalisation.
  return word[0] === word[0]!.toUpperCase() ? g.word[0]!.toUpperCase() + g.word.slice(1) : g.word;
}

const cache = new Map<string, string>();

/** «Иван» → «Ивана», «Мария» → «Марии», «Пётр Ильич» → «Петра Ильича»; as written while the dictionaries load. */
export function genitive(name: string): string {
  load();
  if (state !== "ready") return name;
  let out = cache.get(name);
  if (out === undefined) {
    out = name
      .split(/(\s+)/)
      // A double name declines part by part («Анна-Мария» → «Анны-Марии»).
      .map((w) =>
        /[а-яё]/i.test(w)
          ? w
              .split("-")
              .map((part) => (/^\p{L}+$/u.test(part) ? wordGenitive(part) : part))
              .join("-")
          : w,
      )
      .join("");
    if (cache.size > 5_000) cache.clear();
    cache.set(name, out);
  }
  return out;
}

/** Starts loading the dictionaries now (a test that wants the declined form waits on `genitiveReady`). */
export function genitiveReady(): Promise<boolean> {
  load();
  return new Promise((resolve) => {
    const check = () => (state === "loading" ? setTimeout(check, 20) : resolve(state === "ready"));
    check();
  });
}
