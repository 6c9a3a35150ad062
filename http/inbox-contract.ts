/** Moved to contract/inbox.ts (the shared contract, importable without server code: client/README.md). */
export * from "../contract/inbox";
