/** A fixed, readable UUID for a test's run or process id (run and process ids are `uuid`, migration 000023). */
export const fixedUuid = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
