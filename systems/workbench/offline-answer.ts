// A deterministic stand-in for the ANSWER role when no model is configured: it renders the
// prepared context itself, citing only what was passed — so `npm start` offline gives a useful,
// valid answer and the whole pipeline (citations, validation) runs end to end.
import { TYPE_LABELS } from "./lexicon";
import type { ChatMessage } from "../../llm/types";
import type { ModelRequest } from "./model-request";
import { ANSWER_PROMPT } from "./prompts";

function describe(content: unknown): string {
  if (!content || typeof content !== "object") return "";
  const c = content as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof c.description === "string") parts.push(c.description);
  for (const key of ["fields", "inputs"]) {
    const v = c[key];
    if (Array.isArray(v) && v.length)
      parts.push(`${key === "fields" ? "Поля" : "Входные параметры"}: ${v.map(String).join(", ")}.`);
  }
  if (typeof c.entity === "string") parts.push(`Связана с [[${c.entity}]].`);
  return parts.join(" ");
}

export function offlineAnswer(req: ModelRequest): string {
  const lines: string[] = [];
  for (const b of req.context) {
    if (b.kind === "entity") {
      const label = TYPE_LABELS[b.documentType]?.one ?? b.documentType;
      const where = b.folder ? ` (папка «${b.folder.displayName}»)` : "";
      const about = describe(b.content);
      lines.push(`- ${cap(label)} «${b.displayName}» [[${b.identity}]]${where}.${about ? ` ${about}` : ""}`);
    } else if (b.kind === "list") {
      const label = b.entityType ? (TYPE_LABELS[b.entityType]?.many ?? b.entityType) : "документы";
      const where = b.folder ? ` в папке «${b.folder.displayName}» (включая вложенные)` : "";
      if (b.items.length === 0) lines.push(`- ${cap(label)}${where}: не найдено.`);
      else
        lines.push(
          `- ${cap(label)}${where}: ${b.items.map((i) => `«${i.displayName}» [[${i.identity}]]`).join(", ")}${b.total > b.items.length ? ` и ещё ${b.total - b.items.length}` : ""}.`,
        );
    } else {
      const text = b.text.replace(/\s+/g, " ").trim();
      lines.push(`- Документация, «${b.heading}»: ${text.length > 400 ? `${text.slice(0, 400)}…` : text}`);
    }
  }
  if (lines.length === 0) return "Недостаточно подготовленного контекста для ответа.";
  // Only identities passed in context may be cited; a content reference to a document that was
  // not passed is shown without brackets.
  const passed = new Set<string>();
  for (const b of req.context) {
    if (b.kind === "entity") passed.add(b.identity);
    if (b.kind === "list") b.items.forEach((i) => passed.add(i.identity));
  }
  const body = lines.join("\n").replace(/\[\[([^\]]+)\]\]/g, (m, id: string) => (passed.has(id) ? m : `\`${id}\``));
  return `По запросу «${req.request}»:\n${body}`;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * The offline ANSWER responder. Other systems use ANSWER too: a prompt that is not the
 * Workbench's is declined (null) for the next responder.
 */
export function offlineAnswerResponder(messages: ChatMessage[]): string | null {
  if (messages[0]?.content === ANSWER_PROMPT.text) {
    try {
      return offlineAnswer(JSON.parse(messages.at(-1)?.content ?? "{}") as ModelRequest);
    } catch {
      /* not a ModelRequest: decline */
    }
  }
  return null;
}
