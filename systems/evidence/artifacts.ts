/** Moved to contract/evidence/artifacts.ts (the shared contract, importable without server code: client/README.md). */
export * from "../../contract/evidence/artifacts";
