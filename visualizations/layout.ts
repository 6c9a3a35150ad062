import type { DiagramEdge, DiagramNode, MachineGraph } from "./graph";
import { layered, type LEdge, type LNode, type Pt } from "./layered";
import { clip, monoWidth, textWidth } from "./text";

/**
 * Places a machine graph: each compound state is laid out on its own (its children in layers,
 * its initial marker first), then sized as a box in its parent's layout. Edges are routed at
 * the level of the lowest state that contains both ends.
 */

export const FONT = { state: 12.5, edge: 10.5, internal: 10 };
const PAD = 14;
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
  path: Pt[];
  label: { x: number; y: number; lines: string[] } | null;
  selfLoop: boolean;
}

export interface Layout {
  width: number;
  height: number;
  boxes: Map<string, Box>;
  routes: Route[];
  initials: { at: Pt; path: Pt[] }[];
  /** "From any state" markers: a compound state's own transitions into its descendants start here. */
  anys: { x: number; y: number; w: number; h: number; container: string }[];
}

export const ANY_LABEL = "из любого состояния";

export function edgeLabelLines(e: DiagramEdge, sameEvent: number): string[] {
  const head = sameEvent > 1 ? `${e.event} #${e.order + 1}` : e.event;
  return e.guard ? [clip(head, 40), clip(`[${e.guard}]`, 72)] : [clip(head, 40)];
}

const internalLine = (e: DiagramEdge, sameEvent: number) =>
  clip(
    `⟲ ${e.event}${sameEvent > 1 ? ` #${e.order + 1}` : ""}${e.guard ? ` [${e.guard}]` : ""}${e.actions.length ? ` / ${e.actions.join(", ")}` : ""}`,
    64,
  );

export function layoutMachine(g: MachineGraph): Layout {
  const boxes = new Map<string, Box>();
  const rel = new Map<string, Pt>(); // child's top-left inside its parent's content area
  const levelRoutes = new Map<string, ReturnType<typeof layered>>();
  const levelInit = new Map<string, string>(); // container → its init pseudo-node id
  const anyRel = new Map<string, Pt & { w: number; h: number }>(); // container → its "from any state" node
  const node = (id: string) => g.nodes.get(id)!;
  const ancestors = (id: string) => {
    const out: string[] = [];
    for (let n: string | null = id; n; n = node(n).parent) out.push(n);
    return out;
  };
  const rep = (container: string, id: string) => {
    const a = ancestors(id);
    const i = a.indexOf(container);
    return i > 0 ? a[i - 1]! : null;
  };
  // Same event from one state: number the transitions, since the engine tries them in that order.
  const count = (e: DiagramEdge) =>
    g.edges.filter((x) => x.source === e.source && x.event === e.event).length +
    node(e.source).internal.filter((x) => x.event === e.event).length;

  // Which level routes each (edge, target); self-loops and edges into an own descendant are drawn apart.
  const pairs = g.edges.flatMap((edge) => edge.targets.map((target) => ({ edge, target })));
  const level = new Map<(typeof pairs)[number], string | null>();
  const fromAny = new Set<(typeof pairs)[number]>();
  for (const p of pairs) {
    if (p.target === p.edge.source) {
      level.set(p, null);
      continue;
    }
    if (ancestors(p.target).includes(p.edge.source) && node(p.edge.source).kind === "compound") {
      // A compound state's own transition into its content: taken from whichever child is active.
      level.set(p, p.edge.source);
      fromAny.add(p);
      continue;
    }
    const sa = ancestors(node(p.edge.source).parent ?? p.edge.source);
    const ta = new Set(ancestors(node(p.target).parent ?? p.target));
    const c = sa.find((a) => ta.has(a)) ?? g.root;
    const rs = rep(c, p.edge.source);
    const rt = rep(c, p.target);
    level.set(p, rs && rt && rs !== rt && node(c).kind !== "parallel" ? c : null);
  }
  const loops = new Map<string, number>();
  for (const p of pairs)
    if (p.target === p.edge.source)
      loops.set(
        p.edge.source,
        Math.max(loops.get(p.edge.source) ?? 0, ...edgeLabelLines(p.edge, 1).map((l) => monoWidth(l, FONT.edge) + 40)),
      );

  const size = (id: string): { w: number; h: number } => {
    const n = node(id);
    const lines = n.internal.map((e) => internalLine(e, count(e)));
    const linesW = Math.max(0, ...lines.map((l) => monoWidth(l, FONT.internal) + 16));
    const labelW = textWidth(n.key, FONT.state) + 30;
    if (n.kind === "atomic" || n.kind === "final" || n.kind === "history") {
      const b = { w: Math.max(84, labelW, linesW), h: 32 + lines.length * LINE + (lines.length ? 4 : 0) };
      boxes.set(id, { id, x: 0, y: 0, ...b, node: n, lines });
      return b;
    }
    const kids = n.children.map((c) => ({ id: c, ...size(c) }));
    let inner: { w: number; h: number };
    if (n.kind === "parallel") {
      let x = 0;
      for (const k of kids) {
        rel.set(k.id, { x, y: 0 });
        x += k.w + 18;
      }
      inner = { w: Math.max(0, x - 18), h: Math.max(0, ...kids.map((k) => k.h)) };
    } else {
      const lnodes: LNode[] = kids.map((k) => ({ id: k.id, w: k.w + (loops.get(k.id) ?? 0), h: k.h }));
      const ledges: LEdge[] = [];
      const initId = `${id}#init`;
      if (n.initial) {
        lnodes.unshift({ id: initId, w: INIT, h: INIT });
        ledges.push({ id: initId, from: initId, to: rep(id, n.initial) ?? n.initial });
        levelInit.set(id, initId);
      }
      const anyId = `${id}#any`;
      if (pairs.some((p) => fromAny.has(p) && level.get(p) === id))
        lnodes.unshift({ id: anyId, w: textWidth(ANY_LABEL, FONT.edge) + 22, h: 22 });
      pairs.forEach((p, i) => {
        if (level.get(p) !== id) return;
        const lines = edgeLabelLines(p.edge, count(p.edge));
        ledges.push({
          id: `p${i}`,
          from: fromAny.has(p) ? anyId : rep(id, p.edge.source)!,
          to: rep(id, p.target)!,
          label: { w: Math.max(...lines.map((l) => monoWidth(l, FONT.edge))) + 12, h: lines.length * LABEL_LINE + 4 },
        });
      });
      const r = layered(lnodes, ledges, [...(n.initial ? [initId] : []), anyId]);
      levelRoutes.set(id, r);
      const anyPos = r.pos.get(anyId);
      if (anyPos) anyRel.set(id, { ...anyPos, ...lnodes.find((l) => l.id === anyId)! });
      for (const k of kids) rel.set(k.id, r.pos.get(k.id)!);
      if (n.initial) rel.set(initId, r.pos.get(initId)!);
      inner = { w: r.width, h: r.height };
    }
    const isRoot = id === g.root;
    const head = isRoot ? 0 : HEADER + lines.length * LINE;
    const b = { w: Math.max(inner.w + 2 * PAD, labelW + 10, linesW + 10), h: inner.h + 2 * PAD + head };
    boxes.set(id, { id, x: 0, y: 0, ...b, node: n, lines });
    return b;
  };
  const total = size(g.root);

  // Absolute positions, top-down.
  const origin = new Map<string, Pt>(); // content origin of each container
  const place = (id: string, x: number, y: number) => {
    const b = boxes.get(id)!;
    b.x = x;
    b.y = y;
    const head = id === g.root ? 0 : HEADER + b.lines.length * LINE;
    const o = { x: x + PAD, y: y + PAD + head };
    origin.set(id, o);
    for (const c of b.node.children) {
      const r = rel.get(c)!;
      place(c, o.x + r.x, o.y + r.y);
    }
  };
  place(g.root, 0, 0);

  // Edge anchors are spread over the side they leave or enter, ordered by where the edge goes next.
  type Attach = { box: Box; side: "top" | "bottom"; toward: number; set: (p: Pt) => void };
  const attaches: Attach[] = [];
  const routes: Route[] = [];
  const initials: Layout["initials"] = [];
  const anys: Layout["anys"] = [];
  for (const [container, r] of anyRel) {
    const o = origin.get(container)!;
    anys.push({ x: o.x + r.x, y: o.y + r.y, w: r.w, h: r.h, container });
  }
  const addRoute = (
    edge: DiagramEdge,
    target: string,
    inner: Pt[],
    label: Pt | null,
    sameEvent: number,
    from?: Box,
  ) => {
    const s = from ?? boxes.get(edge.source)!;
    const t = boxes.get(target)!;
    const path: Pt[] = [{ x: 0, y: 0 }, ...inner, { x: 0, y: 0 }];
    const first = inner[0] ?? { x: t.x + t.w / 2, y: t.y + t.h / 2 };
    const last = inner.at(-1) ?? { x: s.x + s.w / 2, y: s.y + s.h / 2 };
    const sDown = first.y > s.y + s.h / 2;
    const tFromAbove = last.y < t.y + t.h / 2;
    attaches.push({ box: s, side: sDown ? "bottom" : "top", toward: first.x, set: (p) => (path[0] = p) });
    attaches.push({
      box: t,
      side: tFromAbove ? "top" : "bottom",
      toward: last.x,
      set: (p) => (path[path.length - 1] = p),
    });
    routes.push({
      edge,
      target,
      path,
      label: label ? { ...label, lines: edgeLabelLines(edge, sameEvent) } : null,
      selfLoop: false,
    });
  };
  pairs.forEach((p, i) => {
    const lv = level.get(p);
    const sameEvent = count(p.edge);
    if (p.target === p.edge.source) {
      const b = boxes.get(p.target)!;
      const x = b.x + b.w;
      const path = [
        { x, y: b.y + b.h * 0.3 },
        { x: x + 22, y: b.y + b.h * 0.3 },
        { x: x + 22, y: b.y + b.h * 0.7 },
        { x, y: b.y + b.h * 0.7 },
      ];
      routes.push({
        edge: p.edge,
        target: p.target,
        path,
        label: { x: x + 26, y: b.y + b.h / 2 - 8, lines: edgeLabelLines(p.edge, sameEvent) },
        selfLoop: true,
      });
      return;
    }
    if (lv) {
      const r = levelRoutes.get(lv)!.routes.get(`p${i}`)!;
      const o = origin.get(lv)!;
      const any = fromAny.has(p) ? anys.find((a) => a.container === lv) : undefined;
      const from = any
        ? ({ id: `${lv}#any`, x: any.x, y: any.y, w: any.w, h: any.h, node: node(lv), lines: [] } as Box)
        : undefined;
      addRoute(
        p.edge,
        p.target,
        r.points.map((q) => ({ x: q.x + o.x, y: q.y + o.y })),
        r.label ? { x: r.label.x + o.x + 8, y: r.label.y + o.y } : null,
        sameEvent,
        from,
      );
    } else {
      // Into an own descendant or across parallel regions: a direct curve, label at its middle.
      const s = boxes.get(p.edge.source)!;
      const t = boxes.get(p.target)!;
      const mid = { x: (s.x + s.w + t.x + t.w) / 2 + 30, y: (s.y + t.y + t.h / 2) / 2 };
      addRoute(p.edge, p.target, [mid], { x: mid.x + 4, y: mid.y - 8 }, sameEvent);
    }
  });
  for (const [container, initId] of levelInit) {
    const o = origin.get(container)!;
    const r = rel.get(initId)!;
    const at = { x: o.x + r.x + INIT / 2, y: o.y + r.y + INIT / 2 };
    const target = boxes.get(node(container).initial!)!;
    const inner = levelRoutes
      .get(container)!
      .routes.get(initId)!
      .points.map((q) => ({ x: q.x + o.x, y: q.y + o.y }));
    const path = [{ x: at.x, y: at.y + INIT / 2 }, ...inner, { x: 0, y: 0 }];
    attaches.push({
      box: target,
      side: "top",
      toward: inner.at(-1)?.x ?? at.x,
      set: (p) => (path[path.length - 1] = p),
    });
    initials.push({ at, path });
  }
  const groups = new Map<string, Attach[]>();
  for (const a of attaches) groups.set(`${a.box.id}|${a.side}`, [...(groups.get(`${a.box.id}|${a.side}`) ?? []), a]);
  for (const list of groups.values()) {
    list.sort((a, b) => a.toward - b.toward);
    list.forEach((a, i) => {
      const span = Math.min(a.box.w * 0.6, list.length * 18);
      const x = a.box.x + a.box.w / 2 - span / 2 + (list.length === 1 ? span / 2 : (span * i) / (list.length - 1));
      a.set({ x, y: a.side === "top" ? a.box.y : a.box.y + a.box.h });
    });
  }
  const loopW = Math.max(
    0,
    ...routes
      .filter((r) => r.selfLoop)
      .map((r) => r.label!.x + Math.max(...r.label!.lines.map((l) => monoWidth(l, FONT.edge))) + 8),
  );
  return { width: Math.max(total.w, loopW), height: total.h, boxes, routes, initials, anys };
}
