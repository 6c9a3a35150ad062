// One labelled answer of the corpus: the scenario whose captured prompt it answers, whether it is
// true (must be shown unchanged) or a lie (must be refused), and its kind for the report.
export interface Labelled {
  scenario: string;
  label: "true" | "lie";
  kind: string;
  text: string;
}

export const truth = (scenario: string, kind: string, text: string): Labelled => ({
  scenario,
  label: "true",
  kind,
  text,
});
export const lie = (scenario: string, kind: string, text: string): Labelled => ({ scenario, label: "lie", kind, text });
