/** Moved to contract/workbench/contract.ts (the shared contract, importable without server code: client/README.md). */
export * from "../../contract/workbench/contract";
