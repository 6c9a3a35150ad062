import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMachine } from "xstate";
import { describe, expect, it } from "vitest";
import { machineCatalog } from "../../driver/system";
import { dialogueSystems } from "../../systems";
import { generateDiagrams } from "../../visualizations/generate";
import { machineGraph } from "../../visualizations/graph";
import { layoutMachine, type Layout } from "../../visualizations/layout";
import { machineSvg, renderSvg } from "../../visualizations/svg";

// Every system's diagrams, the clinic's generated from the seed settings.
const catalog = await machineCatalog(dialogueSystems, null);

function overlaps(l: Layout, ids: string[]): string[] {
  const bad: string[] = [];
  const boxes = ids.map((id) => l.boxes.get(id)!);
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i]!;
      const b = boxes[j]!;
      if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) bad.push(`${a.id} × ${b.id}`);
    }
  return bad;
}

describe("diagrams of every machine in the catalog", () => {
  for (const entry of catalog) {
    it(`${entry.id}: every state and transition drawn, siblings apart, inside the picture`, async () => {
      const machine = entry.build();
      const g = machineGraph(machine);
      const l = await layoutMachine(g);
      const svg = renderSvg(g, l, { title: entry.title });
      for (const id of g.nodes.keys()) if (id !== g.root) expect(svg).toContain(`data-state="${id}"`);
      // An edge each, or a line of a «из любого состояния» group.
      const edges = svg.match(/<g class="e[ "]/g)?.length ?? 0;
      const listed = svg.match(/<text class="i[^"]*" [^>]*data-edge=/g)?.length ?? 0;
      expect(edges + listed).toBe(g.edges.reduce((n, e) => n + e.targets.length, 0));
      for (const n of g.nodes.values()) if (n.children.length) expect(overlaps(l, n.children)).toEqual([]);
      for (const b of l.boxes.values()) {
        expect(b.x).toBeGreaterThanOrEqual(0);
        expect(b.x + b.w).toBeLessThanOrEqual(l.width + 0.5);
        expect(b.y + b.h).toBeLessThanOrEqual(l.height + 0.5);
      }
      for (const r of l.routes) for (const p of r.path) expect(Number.isFinite(p.x) && Number.isFinite(p.y)).toBe(true);
      expect(svg.split("<g").length).toBe(svg.split("</g>").length);
    });
  }

  it("highlights the states of a value, and only those", async () => {
    const steps = catalog.find((e) => e.id === "steps-new_booking")!;
    const svg = await machineSvg(steps.build(), { value: "present", caption: "шаг present" });
    expect(svg.match(/data-active="true"/g)).toHaveLength(1);
    expect(svg).toMatch(/<g class="s atomic active" data-state="[^"]+\.present" data-active="true">/);
    expect(svg).toContain("шаг present");
  });

  it("lists a parent's own transitions as one group, no edges; marks the last event's transitions into the state", async () => {
    const m = createMachine({
      id: "g",
      initial: "a",
      on: { RESET: ".a", HELP: ".h" },
      states: { a: { on: { GO: "b" } }, b: { on: { GO: "a" } }, h: {} },
    });
    const g = machineGraph(m);
    const l = await layoutMachine(g);
    expect(l.anys.map((a) => a.lines.map((x) => x.text))).toEqual([["RESET → a", "HELP → h"]]);
    expect(l.routes.map((r) => `${r.edge.event}:${r.target}`)).toEqual(["GO:g.b", "GO:g.a"]);
    const svg = renderSvg(g, l, { value: "b", lastEvent: "GO" });
    expect(
      [...svg.matchAll(/data-edge="[^"]+" data-last="true" data-event="GO" data-source="([^"]+)"/g)].map((x) => x[1]),
    ).toEqual(["g.a"]);
    const reset = renderSvg(g, l, { value: "a", lastEvent: "RESET" });
    expect(reset.match(/data-last="true"/g)).toHaveLength(1);
    expect(reset).toMatch(/<text class="i last" [^>]*data-event="RESET" data-target="g.a" data-last="true">RESET → a</);
  });

  it("draws compound, parallel, final, self-loops and a parent's own transitions; escapes text", async () => {
    const m = createMachine({
      id: "demo",
      initial: "a",
      on: { RESET: ".a" },
      states: {
        a: { on: { GO: "b", "RETRY<&>": { target: "a", reenter: true } } },
        b: { initial: "x", states: { x: { on: { N: "y" } }, y: { type: "final" } }, onDone: "c" },
        c: {
          type: "parallel",
          states: { r1: { initial: "p", states: { p: {} } }, r2: { initial: "q", states: { q: {} } } },
        },
      },
    });
    const g = machineGraph(m);
    const l = await layoutMachine(g);
    const svg = renderSvg(g, l, { value: { b: "x" } });
    expect(svg).toContain("RETRY&lt;&amp;&gt;");
    expect(svg).not.toContain("RETRY<&>");
    expect(l.routes.filter((r) => r.selfLoop).map((r) => r.edge.event)).toEqual(["RETRY<&>"]);
    expect(l.anys.map((a) => a.container)).toEqual(["demo"]);
    expect(svg).toContain('data-event="onDone"');
    expect(svg).toContain('class="s final"');
    expect(svg).toContain('class="s parallel"');
    expect([...svg.matchAll(/data-state="([^"]+)" data-active="true"/g)].map((x) => x[1])).toEqual([
      "demo.b",
      "demo.b.x",
    ]);
    // Children sit inside their compound parent.
    const b = l.boxes.get("demo.b")!;
    for (const id of ["demo.b.x", "demo.b.y"]) {
      const c = l.boxes.get(id)!;
      expect(c.x >= b.x && c.y >= b.y && c.x + c.w <= b.x + b.w && c.y + c.h <= b.y + b.h).toBe(true);
    }
  });

  it("npm run diagrams writes one SVG per machine and an index page", async () => {
    const dir = mkdtempSync(join(tmpdir(), "diagrams-"));
    const written = await generateDiagrams(dir, catalog);
    const ids = catalog.map((e) => e.id);
    expect(readdirSync(dir).sort()).toEqual([...ids.map((i) => `${i}.svg`), "index.html"].sort());
    expect(written).toHaveLength(ids.length + 1);
    const index = readFileSync(join(dir, "index.html"), "utf8");
    for (const id of ids) expect(index).toContain(`id="${id}"`);
    // The page's own sheet and the diagrams' one, held once for all of them.
    expect(index.match(/<style>/g)).toHaveLength(2);
    expect(readFileSync(join(dir, "interaction.svg"), "utf8")).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  });
});
