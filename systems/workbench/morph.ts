// Moved to lang/morph.ts: Russian morphology is shared by the Workbench and Evidence answer checks.
export * from "../../lang/morph";
