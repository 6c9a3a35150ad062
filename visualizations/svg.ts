import type { AnyStateMachine } from "xstate";
import { activeStateIds, machineGraph, prettyEvent, type MachineGraph } from "./graph";
import { ANY_LABEL, FONT, layoutMachine, type Layout, type Pt } from "./layout";
import { escapeXml } from "./text";

/**
 * Renders a laid-out machine as a self-contained SVG (its own styles, no fonts or scripts to
 * fetch), with the states of a given snapshot highlighted. Every element carries the state or
 * transition id in `data-*` attributes, so pages and tests can find them.
 */

export interface RenderOptions {
  title?: string;
  /** A snapshot's state value (`"idle"`, `{a: "b"}`): those states are highlighted. */
  value?: unknown;
  /** Extra state ids to highlight (e.g. a step held in context rather than in the value). */
  activeIds?: Iterable<string>;
  /** A caption under the title, e.g. which conversation is shown. */
  caption?: string;
  /**
   * The last event the conversation's machine took (its type as the log holds it): the
   * transitions it may have fired — that event's, into a highlighted state — are drawn as the
   * last transition.
   */
  lastEvent?: string;
}

const M = 16;
const TITLE_H = 40;

/** An orthogonal polyline with its corners slightly rounded. */
function polyline(points: Pt[]): string {
  const f = (n: number) => n.toFixed(1);
  const [p0, ...rest] = points;
  if (!p0) return "";
  let d = `M${f(p0.x)},${f(p0.y)}`;
  for (let i = 0; i < rest.length; i++) {
    const q = rest[i]!;
    const next = rest[i + 1];
    const prev = i === 0 ? p0 : rest[i - 1]!;
    if (!next) {
      d += ` L${f(q.x)},${f(q.y)}`;
      break;
    }
    const r = Math.min(5, Math.hypot(q.x - prev.x, q.y - prev.y) / 2, Math.hypot(next.x - q.x, next.y - q.y) / 2);
    const a = toward(q, prev, r);
    const b = toward(q, next, r);
    d += ` L${f(a.x)},${f(a.y)} Q${f(q.x)},${f(q.y)} ${f(b.x)},${f(b.y)}`;
  }
  return d;
}

function toward(from: Pt, to: Pt, r: number): Pt {
  const len = Math.hypot(to.x - from.x, to.y - from.y) || 1;
  return { x: from.x + ((to.x - from.x) / len) * r, y: from.y + ((to.y - from.y) / len) * r };
}

const STYLE = `
  .t{font:600 15px -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif;fill:#111827}
  .c{font:12px -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif;fill:#6b7280}
  .s rect{fill:#fff;stroke:#9ca3af;stroke-width:1.2}
  .s.compound>rect,.s.parallel>rect{fill:#f9fafb}
  .s.parallel>rect{stroke-dasharray:5 3}
  .s.final>rect.inner{fill:none}
  .s text.k{font:600 ${FONT.state}px -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif;fill:#111827}
  .s text.i{font:${FONT.internal}px ui-monospace,SFMono-Regular,Menlo,monospace;fill:#4b5563}
  .s.active>rect{fill:#dbeafe;stroke:#2563eb;stroke-width:2.4}
  .s.active.compound>rect,.s.active.parallel>rect{fill:#eff6ff}
  .s.active>text.k{fill:#1d4ed8}
  .e path{fill:none;stroke:#6b7280;stroke-width:1.3}
  .e text{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round;font:${FONT.edge}px ui-monospace,SFMono-Regular,Menlo,monospace;fill:#374151}
  .e text .g{fill:#b45309}
  .e.from-active path{stroke:#2563eb}
  .any>rect{fill:#fff;stroke:#9ca3af;stroke-dasharray:4 3}.any text.h{font:italic ${FONT.edge}px -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif;fill:#6b7280}
  .any text.i{font:${FONT.internal}px ui-monospace,SFMono-Regular,Menlo,monospace;fill:#374151}
  .any text.i.last{fill:#c2410c;font-weight:700}
  .e.last path{stroke:#ea580c;stroke-width:3}
  .e.last text{fill:#c2410c;font-weight:700}
  .init circle{fill:#111827}.init path{fill:none;stroke:#111827;stroke-width:1.3}
`;

export function renderSvg(graph: MachineGraph, layout: Layout, o: RenderOptions = {}): string {
  const active = new Set<string>([
    ...(o.value !== undefined ? activeStateIds(graph, o.value) : []),
    ...(o.activeIds ?? []),
  ]);
  const W = Math.ceil(layout.width + 2 * M);
  const H = Math.ceil(layout.height + 2 * M + TITLE_H);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" data-machine="${escapeXml(graph.machineId)}" role="img" aria-label="${escapeXml(o.title ?? graph.machineId)}">`,
    `<style>${STYLE}</style>`,
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#6b7280"/></marker>`,
    `<marker id="arrow-a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#2563eb"/></marker>`,
    `<marker id="arrow-l" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#ea580c"/></marker></defs>`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text class="t" x="${M}" y="${M + 8}">${escapeXml(o.title ?? graph.machineId)}</text>`,
  );
  if (o.caption) out.push(`<text class="c" x="${M}" y="${M + 26}">${escapeXml(o.caption)}</text>`);
  out.push(`<g transform="translate(${M},${M + TITLE_H})">`);

  // States, outermost first so nested boxes paint over their parents.
  const depth = (id: string) => {
    let d = 0;
    for (let n = graph.nodes.get(id)?.parent; n; n = graph.nodes.get(n)?.parent) d++;
    return d;
  };
  const boxes = [...layout.boxes.values()].filter((b) => b.id !== graph.root).sort((a, b) => depth(a.id) - depth(b.id));
  for (const b of boxes) {
    const n = b.node;
    const cls = ["s", n.kind, active.has(b.id) ? "active" : ""].filter(Boolean).join(" ");
    const tip = [n.id, n.description ?? "", ...b.lines].filter(Boolean).join("\n");
    out.push(
      `<g class="${cls}" data-state="${escapeXml(n.id)}"${active.has(b.id) ? ' data-active="true"' : ""}><title>${escapeXml(tip)}</title>`,
    );
    out.push(
      `<rect x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="${n.kind === "atomic" || n.kind === "final" ? 10 : 12}"/>`,
    );
    if (n.kind === "final")
      out.push(`<rect class="inner" x="${b.x + 3}" y="${b.y + 3}" width="${b.w - 6}" height="${b.h - 6}" rx="8"/>`);
    const compound = n.kind === "compound" || n.kind === "parallel";
    const ky = compound ? b.y + 17 : b.y + 20;
    out.push(
      `<text class="k" x="${compound ? b.x + 10 : b.x + b.w / 2}" y="${ky}"${compound ? "" : ' text-anchor="middle"'}>${escapeXml(n.key)}</text>`,
    );
    b.lines.forEach((l, i) =>
      out.push(`<text class="i" x="${b.x + 8}" y="${ky + 16 + i * 14}">${escapeXml(l)}</text>`),
    );
    out.push(`</g>`);
  }
  const isLast = (event: string, target: string) =>
    o.lastEvent !== undefined && event === prettyEvent(o.lastEvent) && active.has(target);
  for (const a of layout.anys) {
    out.push(
      `<g class="any" data-any="${escapeXml(a.container)}"><title>${escapeXml(`${ANY_LABEL}: переходы ${a.container}, из какого бы дочернего состояния они ни шли`)}</title><rect x="${a.x}" y="${a.y}" width="${a.w}" height="${a.h}" rx="8"/><text class="h" x="${a.x + 8}" y="${a.y + 15}">${ANY_LABEL}:</text>`,
      ...a.lines.map((l, i) => {
        const last = isLast(l.edge.event, l.target);
        return `<text class="i${last ? " last" : ""}" x="${a.x + 8}" y="${a.y + 32 + i * 14}" data-edge="${l.edge.id}" data-event="${escapeXml(l.edge.event)}" data-target="${escapeXml(l.target)}"${last ? ' data-last="true"' : ""}>${escapeXml(l.text)}</text>`;
      }),
      `</g>`,
    );
  }
  for (const init of layout.initials) {
    out.push(
      `<g class="init"><circle cx="${init.at.x}" cy="${init.at.y}" r="5"/><path d="${polyline(init.path)}" marker-end="url(#arrow)"/></g>`,
    );
  }
  for (const r of layout.routes) {
    const hot = active.has(r.edge.source);
    const last = isLast(r.edge.event, r.target);
    const label = r.label
      ? `<text x="${r.label.x.toFixed(1)}" y="${(r.label.y + 11).toFixed(1)}">${r.label.lines
          .map(
            (l, i) =>
              `<tspan x="${r.label!.x.toFixed(1)}" dy="${i ? 13 : 0}"${l.startsWith("[") ? ' class="g"' : ""}>${escapeXml(l)}</tspan>`,
          )
          .join("")}</text>`
      : "";
    out.push(
      `<g class="e${hot ? " from-active" : ""}${last ? " last" : ""}" data-edge="${r.edge.id}"${last ? ' data-last="true"' : ""} data-event="${escapeXml(r.edge.event)}" data-source="${escapeXml(r.edge.source)}" data-target="${escapeXml(r.target)}">`,
      `<title>${escapeXml(`${r.edge.source} → ${r.target}\n${r.edge.event}${r.edge.guard ? ` [${r.edge.guard}]` : ""}${r.edge.actions.length ? ` / ${r.edge.actions.join(", ")}` : ""}`)}</title>`,
      `<path d="${polyline(r.path)}" marker-end="url(#${last ? "arrow-l" : hot ? "arrow-a" : "arrow"})"/>${label}</g>`,
    );
  }
  out.push(`</g></svg>`);
  return out.join("\n");
}

/** Machine object → SVG in one call. */
export async function machineSvg(machine: AnyStateMachine, o: RenderOptions = {}): Promise<string> {
  const graph = machineGraph(machine);
  return renderSvg(graph, await layoutMachine(graph), o);
}
