/** Moved to contract/evidence/reason-codes.ts (the shared contract, importable without server code: client/README.md). */
export * from "../../contract/evidence/reason-codes";
