/** Moved to contract/workbench/types.ts (the shared contract, importable without server code: client/README.md). */
export * from "../../contract/workbench/types";
