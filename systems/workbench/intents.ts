import type { Intent, SourceMode } from "./types";

/**
 * What each Workbench intent is, in one table: the stages ask it (does the task read the
 * workspace? does it name its targets, or a type to list?) instead of comparing intent names,
 * so a new intent is a row here (the compiler asks for one: `satisfies Record<Intent, …>`) plus
 * its cue in the clause parser and whatever new stage work it brings.
 */
export interface IntentTraits {
  /** Where its answer comes from: the workspace snapshot, the documentation, or nowhere (refused). */
  reads: "domain" | "documentation" | "none";
  /** What it names: documents by name (one target a task, resolved and clarified), a type to list, or nothing. */
  targets: "named" | "type" | "none";
  /** Source modes a plan may give it (plan validation). */
  sources: readonly SourceMode[];
}

export const INTENT_TRAITS = {
  explain_documentation: { reads: "documentation", targets: "none", sources: ["documentation", "mixed"] },
  find_entity: { reads: "domain", targets: "named", sources: ["domain", "mixed", "conversation"] },
  inspect_entity: { reads: "domain", targets: "named", sources: ["domain", "mixed", "conversation"] },
  list_entities: { reads: "domain", targets: "type", sources: ["domain", "mixed", "conversation"] },
  unsupported: { reads: "none", targets: "none", sources: ["none"] },
} as const satisfies Record<Intent, IntentTraits>;

const traits = (intent: string): IntentTraits | undefined => INTENT_TRAITS[intent as Intent];

/** A task answered from the workspace snapshot: the resolver looks its targets up. */
export const readsDomain = (intent: string) => traits(intent)?.reads === "domain";
/** A task answered from the documentation alone. */
export const readsDocumentation = (intent: string) => traits(intent)?.reads === "documentation";
/** A task the Workbench refuses (a workspace change): reported, never run. */
export const isRefused = (intent: string) => traits(intent)?.reads === "none";
/** A task naming documents: one target a task, each resolved (and clarified) on its own. */
export const namesTargets = (intent: string) => traits(intent)?.targets === "named";
/** A task listing the documents of a type (no one target to resolve). */
export const listsType = (intent: string) => traits(intent)?.targets === "type";
/** Source modes the plan may give the intent (none for an unknown intent). */
export const allowedSources = (intent: string): readonly SourceMode[] => traits(intent)?.sources ?? [];
