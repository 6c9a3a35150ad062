/** Moved to contract/clinic/contract.ts (the shared contract, importable without server code: client/README.md). */
export * from "../../contract/clinic/contract";
