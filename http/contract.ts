/** Moved to contract/http.ts (the shared contract, importable without server code: client/README.md). */
export * from "../contract/http";
