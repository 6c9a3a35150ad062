/** Moved to contract/evidence/contract.ts (the shared contract, importable without server code: client/README.md). */
export * from "../../contract/evidence/contract";
