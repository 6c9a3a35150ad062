/** Moved to contract/evidence/tool-contracts.ts (the shared contract, importable without server code: client/README.md). */
export * from "../../contract/evidence/tool-contracts";
