/** Snapshot keys of the Workbench's side machines (driver/side-machines.ts moves them). */
export const interactionKey = (id: string) => `interaction:${id}`;
export const clarificationKey = (id: string) => `clarification:${id}`;
