import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { machineCatalog } from "../../driver/system";
import { dialogueSystems } from "../../systems";
import { machineSvg } from "../../visualizations/svg";

/**
 * doc/diagrams/*.svg are the pictures the docs show (the clinic statechart among them); they are
 * what `npm run diagrams -- doc/diagrams` draws from the seed settings today, so a machine that
 * changes without them being redrawn fails here.
 */
describe("doc/diagrams", () => {
  it("holds every machine of the catalog, drawn from today's definitions", async () => {
    const entries = await machineCatalog(dialogueSystems, null);
    const committed = readdirSync("doc/diagrams").filter((f) => f.endsWith(".svg"));
    expect(committed.sort()).toEqual(entries.map((e) => `${e.id}.svg`).sort());
    expect(committed).toContain("clinic-dialogue.svg");
    for (const e of entries)
      expect(readFileSync(`doc/diagrams/${e.id}.svg`, "utf8"), `${e.id}: run npm run diagrams -- doc/diagrams`).toBe(
        `${await machineSvg(e.build(), { title: e.title })}\n`,
      );
  });
});
