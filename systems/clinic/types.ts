/** Moved to contract/clinic/types.ts (the shared contract, importable without server code: client/README.md). */
export * from "../../contract/clinic/types";
