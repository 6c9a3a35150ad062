/** Moved to contract/user-text.ts (the shared contract, importable without server code: client/README.md). */
export * from "../contract/user-text";
