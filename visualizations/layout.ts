import ELK from "elkjs/lib/elk.bundled.js";
import type { ElkExtendedEdge, ElkNode } from "elkjs/lib/elk-api";
import type { DiagramEdge, DiagramNode, MachineGraph } from "./graph";
import { clip, monoWidth, textWidth } from "./text";

/**
 * Places a machine graph with ELK's layered algorithm (elkjs): the whole hierarchy in one run
 * (compound states are boxes holding their children, edges may cross levels), orthogonal edge
 * routing, and edge labels placed by ELK as obstacles of their own, so no label sits on a state
 * or on another label. Coordinates come back relative to the picture (json.shapeCoords/edgeCoords
 * = ROOT), which is what the SVG renderer draws.
 */

export interface Pt {
  x: number;
  y: number;
}

export const FONT = { state: 12.5, edge: 10.5, internal: 10 };
const HEADER = 24;
const LINE = 14;
const LABEL_LINE = 13;
const INIT = 10;

export interface Box {
  id: string;
  x: number;
  y: number;
  w: number;
  h: number;
  node: DiagramNode;
  /** Targetless transitions, one line each. */
  lines: string[];
}

export interface Route {
  edge: DiagramEdge;
  target: string;
  /** Orthogonal polyline: start, bends, end. */
  path: Pt[];
  label: { x: number; y: number; w: number; h: number; lines: string[] } | null;
  selfLoop: boolean;
}

export interface Layout {
  width: number;
  height: number;
  boxes: Map<string, Box>;
  routes: Route[];
  initials: { at: Pt; path: Pt[] }[];
  /**
   * "From any state" groups: a compound state's own transitions into its descendants, taken from
   * whichever child is active, listed in one labelled box inside it (one line per transition and
   * target) instead of a fan of edges from a marker across the picture.
   */
  anys: { x: number; y: number; w: number; h: number; container: string; lines: AnyLine[] }[];
}

/** One transition of a "from any state" group: its text, the edge and the target it names. */
export interface AnyLine {
  text: string;
  edge: DiagramEdge;
  target: string;
}

const ANY_HEAD = 22;

export const ANY_LABEL = "из любого состояния";

export function edgeLabelLines(e: DiagramEdge, sameEvent: number): string[] {
  const head = sameEvent > 1 ? `${e.event} #${e.order + 1}` : e.event;
  return e.guard ? [clip(head, 40), clip(`[${e.guard}]`, 72)] : [clip(head, 40)];
}

const anyLine = (e: DiagramEdge, sameEvent: number, target: string) =>
  clip(`${e.event}${sameEvent > 1 ? ` #${e.order + 1}` : ""}${e.guard ? ` [${e.guard}]` : ""} → ${target}`, 84);

const internalLine = (e: DiagramEdge, sameEvent: number) =>
  clip(
    `⟲ ${e.event}${sameEvent > 1 ? ` #${e.order + 1}` : ""}${e.guard ? ` [${e.guard}]` : ""}${e.actions.length ? ` / ${e.actions.join(", ")}` : ""}`,
    64,
  );

const ROOT_OPTIONS = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
  "elk.hierarchyHandling": "INCLUDE_CHILDREN",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.json.shapeCoords": "ROOT",
  "elk.json.edgeCoords": "ROOT",
  "elk.layered.crossingMinimization.strategy": "LAYER_SWEEP",
  "elk.layered.nodePlacement.strategy": "NETWORK_SIMPLEX",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  "elk.layered.thoroughness": "20",
  "elk.spacing.nodeNode": "28",
  "elk.layered.spacing.nodeNodeBetweenLayers": "34",
  "elk.spacing.edgeNode": "14",
  "elk.spacing.edgeEdge": "10",
  "elk.spacing.edgeLabel": "4",
  "elk.spacing.labelLabel": "6",
  "elk.layered.spacing.edgeNodeBetweenLayers": "14",
  "elk.layered.spacing.edgeEdgeBetweenLayers": "10",
  "elk.edgeLabels.placement": "CENTER",
  "elk.layered.edgeLabels.sideSelection": "SMART_DOWN",
  "elk.padding": "[top=4,left=4,bottom=4,right=4]",
};

const elk = new ELK();

export async function layoutMachine(g: MachineGraph): Promise<Layout> {
  const node = (id: string) => g.nodes.get(id)!;
  const ancestors = (id: string) => {
    const out: string[] = [];
    for (let n: string | null = id; n; n = node(n).parent) out.push(n);
    return out;
  };
  // Same event from one state: number the transitions, since the engine tries them in that order.
  const count = (e: DiagramEdge) =>
    g.edges.filter((x) => x.source === e.source && x.event === e.event).length +
    node(e.source).internal.filter((x) => x.event === e.event).length;

  const pairs = g.edges.flatMap((edge) => edge.targets.map((target) => ({ edge, target })));
  // A compound state's own transition into its content is taken from whichever child is active:
  // drawn from a "from any state" marker inside it.
  const fromAny = (p: (typeof pairs)[number]) =>
    p.target !== p.edge.source &&
    node(p.edge.source).kind === "compound" &&
    ancestors(p.target).includes(p.edge.source);
  const anyLines = new Map<string, AnyLine[]>();
  for (const p of pairs.filter(fromAny))
    anyLines.set(p.edge.source, [
      ...(anyLines.get(p.edge.source) ?? []),
      { text: anyLine(p.edge, count(p.edge), node(p.target).key), edge: p.edge, target: p.target },
    ]);

  const lines = new Map<string, string[]>();
  const build = (id: string): ElkNode => {
    const n = node(id);
    const ls = n.internal.map((e) => internalLine(e, count(e)));
    lines.set(id, ls);
    const linesW = Math.max(0, ...ls.map((l) => monoWidth(l, FONT.internal) + 16));
    const labelW = textWidth(n.key, FONT.state) + 30;
    if (n.kind === "atomic" || n.kind === "final" || n.kind === "history")
      return { id, width: Math.max(84, labelW, linesW), height: 32 + ls.length * LINE + (ls.length ? 4 : 0) };
    const children: ElkNode[] = [];
    if (n.initial) children.push({ id: `${id}#init`, width: INIT, height: INIT });
    const group = anyLines.get(id);
    if (group)
      children.push({
        id: `${id}#any`,
        width: Math.max(
          textWidth(ANY_LABEL, FONT.edge) + 22,
          ...group.map((l) => monoWidth(l.text, FONT.internal) + 16),
        ),
        height: ANY_HEAD + group.length * LINE + 6,
      });
    children.push(...n.children.map(build));
    const isRoot = id === g.root;
    const head = isRoot ? 4 : HEADER + ls.length * LINE + 8;
    return {
      id,
      children,
      layoutOptions: {
        "elk.padding": `[top=${head},left=12,bottom=12,right=12]`,
        "elk.nodeSize.minimum": `(${Math.max(labelW + 10, linesW + 10)},${head + 20})`,
        "elk.nodeSize.constraints": "MINIMUM_SIZE",
        ...(n.kind === "parallel" ? { "elk.direction": "RIGHT" } : {}),
      },
    };
  };
  const root = build(g.root);

  const edges: ElkExtendedEdge[] = [];
  const meta = new Map<string, { pair: (typeof pairs)[number]; lines: string[] } | { init: string }>();
  for (const n of g.nodes.values())
    if (n.initial) {
      const id = `${n.id}#init>`;
      edges.push({ id, sources: [`${n.id}#init`], targets: [n.initial] });
      meta.set(id, { init: n.id });
    }
  pairs.forEach((p, i) => {
    if (fromAny(p)) return;
    const ls = edgeLabelLines(p.edge, count(p.edge));
    const id = `p${i}`;
    meta.set(id, { pair: p, lines: ls });
    edges.push({
      id,
      sources: [p.edge.source],
      targets: [p.target],
      labels: [
        {
          text: ls.join("\n"),
          width: Math.max(...ls.map((l) => monoWidth(l, FONT.edge))) + 8,
          height: ls.length * LABEL_LINE + 4,
        },
      ],
    });
  });
  root.edges = edges;
  root.layoutOptions = { ...root.layoutOptions, ...ROOT_OPTIONS };

  const out = await elk.layout(root);

  const boxes = new Map<string, Box>();
  const anys: Layout["anys"] = [];
  const inits = new Map<string, Pt>();
  const walk = (e: ElkNode) => {
    const box = { x: e.x ?? 0, y: e.y ?? 0, w: e.width ?? 0, h: e.height ?? 0 };
    if (e.id.endsWith("#any"))
      anys.push({ ...box, container: e.id.slice(0, -4), lines: anyLines.get(e.id.slice(0, -4)) ?? [] });
    else if (e.id.endsWith("#init")) inits.set(e.id.slice(0, -5), { x: box.x + INIT / 2, y: box.y + INIT / 2 });
    else boxes.set(e.id, { id: e.id, ...box, node: node(e.id), lines: lines.get(e.id) ?? [] });
    for (const c of e.children ?? []) walk(c);
  };
  walk(out);

  const routes: Route[] = [];
  const initials: Layout["initials"] = [];
  const pathOf = (e: ElkExtendedEdge): Pt[] =>
    (e.sections ?? []).flatMap((s, i) => [...(i === 0 ? [s.startPoint] : []), ...(s.bendPoints ?? []), s.endPoint]);
  for (const e of (out.edges ?? []) as ElkExtendedEdge[]) {
    const m = meta.get(e.id)!;
    const path = pathOf(e);
    if ("init" in m) {
      initials.push({ at: inits.get(m.init)!, path });
      continue;
    }
    const l = e.labels?.[0];
    routes.push({
      edge: m.pair.edge,
      target: m.pair.target,
      path,
      label: l ? { x: l.x ?? 0, y: l.y ?? 0, w: l.width ?? 0, h: l.height ?? 0, lines: m.lines } : null,
      selfLoop: m.pair.target === m.pair.edge.source,
    });
  }
  // Keep the document's order of transitions (ELK returns edges as given, but do not rely on it).
  routes.sort((a, b) => Number(a.edge.id.slice(1)) - Number(b.edge.id.slice(1)));
  return { width: out.width ?? 0, height: out.height ?? 0, boxes, routes, initials, anys };
}
