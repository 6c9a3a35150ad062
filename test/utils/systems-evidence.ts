/**
 * The planner-role script most evidence scenarios share: the interpreter's reading of the question,
 * two empty planner replies (so the deterministic plan stands) and the critic's reply last.
 */
export const plannedBy = (interpretation: string, critique: string): string[] => [interpretation, "{}", "{}", critique];
