import { syntheticWorkspace } from "./bench/resolve";
import { buildIndex } from "./workbench/resolve-index";
const a = syntheticWorkspace(100000, 42), b = syntheticWorkspace(100000, 43);
for (const [i, w] of [a, b, a].entries()) { const t = performance.now(); buildIndex(w, "x" + i); console.log(i, Math.round(performance.now() - t)); }
