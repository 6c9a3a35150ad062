/**
 * A small layered (Sugiyama-style) layout, top to bottom: the graphs it draws are statecharts
 * of a handful of states, so clarity beats speed. Steps: break cycles (back edges are laid out
 * reversed), rank by longest path with every labelled edge two ranks long so its label gets a row
 * of its own, split long edges with dummy points, order each row by barycenters (keeping the order with
 * the fewest crossings), then place x by isotonic regression towards the neighbours' median.
 */

export interface Pt {
  x: number;
  y: number;
}

export interface LNode {
  id: string;
  w: number;
  h: number;
}

export interface LEdge {
  id: string;
  from: string;
  to: string;
  /** Size of the label box; the path runs along its left side. A labelled edge spans two ranks, others one. */
  label?: { w: number; h: number };
}

export interface LayeredResult {
  /** Top-left corner of every node. */
  pos: Map<string, Pt>;
  width: number;
  height: number;
  /** Interior points of each edge in its real direction (from → to), and its label's top-left. */
  routes: Map<string, { points: Pt[]; label: Pt | null; reversed: boolean }>;
}

const RANK_GAP = 14;
const NODE_GAP = 26;
const DUMMY_W = 8;

interface V {
  id: string;
  w: number;
  h: number;
  rank: number;
  x: number;
  y: number;
  real: boolean;
}

/** Depth-first from the given roots (then any node left): an edge into a node on the stack is a back edge. */
function backEdges(nodes: LNode[], edges: LEdge[], roots: string[]): Set<string> {
  const out = new Map<string, LEdge[]>();
  for (const e of edges) out.set(e.from, [...(out.get(e.from) ?? []), e]);
  const state = new Map<string, 1 | 2>();
  const back = new Set<string>();
  const dfs = (id: string) => {
    state.set(id, 1);
    for (const e of out.get(id) ?? []) {
      const s = state.get(e.to);
      if (s === 1) back.add(e.id);
      else if (s === undefined) dfs(e.to);
    }
    state.set(id, 2);
  };
  for (const id of [...roots, ...nodes.map((n) => n.id)]) if (!state.has(id)) dfs(id);
  return back;
}

function crossings(rows: V[][], links: [V, V][]): number {
  let c = 0;
  const idx = new Map<V, number>();
  rows.forEach((r) => r.forEach((v, i) => idx.set(v, i)));
  const byRank = new Map<number, [number, number][]>();
  for (const [a, b] of links) byRank.set(a.rank, [...(byRank.get(a.rank) ?? []), [idx.get(a)!, idx.get(b)!]]);
  for (const list of byRank.values())
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) if ((list[i]![0] - list[j]![0]) * (list[i]![1] - list[j]![1]) < 0) c++;
  return c;
}

/** Least-squares positions towards `want`, keeping the row's order and gaps (pool adjacent violators). */
function isotonic(row: V[], want: number[]): void {
  const offset: number[] = [];
  let acc = 0;
  for (const v of row) {
    offset.push(acc);
    acc += v.w + NODE_GAP;
  }
  const blocks: { sum: number; n: number; start: number }[] = [];
  row.forEach((v, i) => {
    blocks.push({ sum: want[i]! - v.w / 2 - offset[i]!, n: 1, start: i });
    while (blocks.length > 1 && blocks.at(-2)!.sum / blocks.at(-2)!.n > blocks.at(-1)!.sum / blocks.at(-1)!.n) {
      const b = blocks.pop()!;
      blocks.at(-1)!.sum += b.sum;
      blocks.at(-1)!.n += b.n;
    }
  });
  for (const b of blocks) for (let i = b.start; i < b.start + b.n; i++) row[i]!.x = b.sum / b.n + offset[i]!;
}

export function layered(nodes: LNode[], edges: LEdge[], roots: string[] = []): LayeredResult {
  const back = backEdges(nodes, edges, roots);
  const dir = edges.map((e) => (back.has(e.id) ? { ...e, from: e.to, to: e.from } : e));
  // Longest path, each edge spanning two ranks (the middle one holds its label).
  const rank = new Map(nodes.map((n) => [n.id, 0]));
  for (let changed = true, guard = 0; changed && guard < nodes.length * 2 + 2; guard++) {
    changed = false;
    for (const e of dir) {
      if (e.from === e.to) continue;
      const r = rank.get(e.from)! + (e.label ? 2 : 1);
      if (r > rank.get(e.to)!) (rank.set(e.to, r), (changed = true));
    }
  }
  const vs = new Map<string, V>(
    nodes.map((n) => [n.id, { id: n.id, w: n.w, h: n.h, rank: rank.get(n.id)!, x: 0, y: 0, real: true }]),
  );
  const chains = new Map<string, { chain: V[]; label: V | null }>();
  const links: [V, V][] = [];
  for (const e of dir) {
    const a = vs.get(e.from)!;
    const b = vs.get(e.to)!;
    const chain: V[] = [a];
    let label: V | null = null;
    for (let r = a.rank + 1; r < b.rank; r++) {
      const isLabel = r === a.rank + 1 && !!e.label;
      const v: V = {
        id: `${e.id}@${r}`,
        w: isLabel ? e.label!.w : DUMMY_W,
        h: isLabel ? e.label!.h : 0,
        rank: r,
        x: 0,
        y: 0,
        real: false,
      };
      if (isLabel) label = v;
      chain.push(v);
    }
    chain.push(b);
    for (let i = 0; i + 1 < chain.length; i++) links.push([chain[i]!, chain[i + 1]!]);
    chains.set(e.id, { chain, label });
  }
  const all = [...vs.values(), ...[...chains.values()].flatMap((c) => c.chain.slice(1, -1))];
  const maxRank = Math.max(0, ...all.map((v) => v.rank));
  let rows: V[][] = Array.from({ length: maxRank + 1 }, () => []);
  for (const v of all) rows[v.rank]!.push(v);
  const up = new Map<V, V[]>();
  const down = new Map<V, V[]>();
  for (const [a, b] of links) {
    down.set(a, [...(down.get(a) ?? []), b]);
    up.set(b, [...(up.get(b) ?? []), a]);
  }

  // Ordering: barycenter sweeps, keeping the best seen.
  const index = () => new Map(rows.flatMap((r) => r.map((v, i) => [v, i] as const)));
  let best = rows.map((r) => [...r]);
  let bestC = crossings(rows, links);
  for (let it = 0; it < 8 && bestC > 0; it++) {
    const downward = it % 2 === 0;
    const order = downward ? rows.map((_, i) => i) : rows.map((_, i) => rows.length - 1 - i);
    for (const r of order.slice(1)) {
      const idx = index();
      const nb = downward ? up : down;
      const bary = new Map(
        rows[r]!.map((v, i) => {
          const ns = nb.get(v) ?? [];
          return [v, ns.length ? ns.reduce((s, n) => s + idx.get(n)!, 0) / ns.length : i] as const;
        }),
      );
      rows[r]!.sort((a, b) => bary.get(a)! - bary.get(b)!);
    }
    const c = crossings(rows, links);
    if (c < bestC) ((bestC = c), (best = rows.map((r) => [...r])));
  }
  rows = best;

  // y by rows; x packed, then pulled towards neighbours.
  let y = 0;
  for (const row of rows) {
    const h = Math.max(0, ...row.map((v) => v.h));
    for (const v of row) v.y = y + (h - v.h) / 2;
    y += h + (row.length ? RANK_GAP : 0);
  }
  for (const row of rows)
    isotonic(
      row,
      row.map((_, i) => i * 200),
    );
  const center = (v: V) => v.x + v.w / 2;
  for (let it = 0; it < 12; it++) {
    const seq = it % 3 === 0 ? rows : it % 3 === 1 ? [...rows].reverse() : rows;
    for (const row of seq) {
      const want = row.map((v) => {
        const ns =
          it % 3 === 0
            ? (up.get(v) ?? [])
            : it % 3 === 1
              ? (down.get(v) ?? [])
              : [...(up.get(v) ?? []), ...(down.get(v) ?? [])];
        if (!ns.length) return center(v);
        const cs = ns.map(center).sort((a, b) => a - b);
        return (cs[Math.floor((cs.length - 1) / 2)]! + cs[Math.ceil((cs.length - 1) / 2)]!) / 2;
      });
      isotonic(row, want);
    }
  }
  const minX = Math.min(...all.map((v) => v.x));
  for (const v of all) v.x -= minX;
  const width = Math.max(0, ...all.map((v) => v.x + v.w));

  const routes: LayeredResult["routes"] = new Map();
  for (const e of edges) {
    const { chain, label } = chains.get(e.id)!;
    // Interior points on the label's left edge, so the text sits beside the line, not on it.
    let points = chain.slice(1, -1).map((v) => ({ x: v === label ? v.x + 2 : center(v), y: v.y + v.h / 2 }));
    const reversed = back.has(e.id);
    if (reversed) points = points.reverse();
    routes.set(e.id, { points, label: label ? { x: label.x, y: label.y } : null, reversed });
  }
  return {
    pos: new Map([...vs.values()].map((v) => [v.id, { x: v.x, y: v.y }])),
    width,
    height: Math.max(0, y - RANK_GAP),
    routes,
  };
}
