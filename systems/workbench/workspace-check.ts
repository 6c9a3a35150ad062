// A trusted workspace snapshot must name each document by one identity: the resolver, the context
// blocks and [[identity]] citations all key on the (folded) identity alone, so two documents with
// one identity would be mixed — stage 06 resolving one and the model reading another. Such a
// snapshot is refused before any stage runs (decision for issue 14; see README "exact identity").
import { fold } from "./text";
import type { WorkspaceSnapshot } from "./types";

export interface DuplicateIdentity {
  identity: string;
  documents: Array<{ documentType: string; displayName: string }>;
}

/** Identities (compared folded: case, ё, dashes) held by more than one document, in snapshot order. */
export function duplicateIdentities(snapshot: WorkspaceSnapshot): DuplicateIdentity[] {
  const first = new Map<string, number>();
  const dups = new Map<string, DuplicateIdentity>();
  snapshot.documents.forEach((d, i) => {
    const key = fold(d.identity);
    const at = first.get(key);
    if (at === undefined) {
      first.set(key, i);
      return;
    }
    let entry = dups.get(key);
    if (!entry) {
      const f = snapshot.documents[at]!;
      entry = { identity: f.identity, documents: [{ documentType: f.documentType, displayName: f.displayName }] };
      dups.set(key, entry);
    }
    entry.documents.push({ documentType: d.documentType, displayName: d.displayName });
  });
  return [...dups.values()];
}

/** The refusal message (English for the integrating backend, Russian for a Configurator user). */
export function duplicateIdentitiesMessage(dups: readonly DuplicateIdentity[]): string {
  const shown = dups.slice(0, 10).map((d) => d.identity);
  const more = dups.length > shown.length ? ` (+${dups.length - shown.length})` : "";
  const list = shown.join(", ") + more;
  return (
    `workspace: duplicate document identities: ${list}; each identity must name exactly one document. ` +
    `В снимке Workspace повторяются identity: ${list} — каждый identity должен принадлежать одному документу.`
  );
}
