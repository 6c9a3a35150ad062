// A prompt template is a pure function of its input plus an (id, version, sha256) manifest entry,
// so every model call can say exactly which text it was given (debug stage 10).
import { createHash } from "node:crypto";

export interface PromptManifestEntry {
  id: string;
  version: string;
  sha256: string;
}

export interface PromptTemplate extends PromptManifestEntry {
  text: string;
}

export function definePrompt(id: string, version: string, text: string): PromptTemplate {
  return { id, version, text, sha256: createHash("sha256").update(text).digest("hex") };
}

export function manifestOf(p: PromptTemplate): PromptManifestEntry {
  return { id: p.id, version: p.version, sha256: p.sha256 };
}
