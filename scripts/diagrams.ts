import { resolve } from "node:path";
import { machineCatalog } from "../driver/system";
import { dialogueSystems } from "../systems";
import { generateDiagrams } from "../visualizations/generate";

// `npm run diagrams [-- <dir>]`: every system's machines (settings-generated ones from the seed
// settings) as SVGs plus an index.html. Default dir: .data/diagrams.
const dir = resolve(process.argv[2] ?? ".data/diagrams");
for (const f of await generateDiagrams(dir, await machineCatalog(dialogueSystems, null))) console.log(f);
