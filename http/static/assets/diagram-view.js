// A statechart picture you can move around: drawn whole into its box (fit), zoomed by the buttons,
// Ctrl/⌘ + wheel (a trackpad's pinch) or two fingers, moved by dragging — the box never scrolls
// sideways, the view box of the SVG moves instead. «К текущему» brings the highlighted state
// into the middle at full size. A side panel's small box opens readable rather than whole.

const MAX_SCALE = 3;
const READABLE = 0.8;

/** Turns `container` (holding the server's SVG) into a fit-to-box, zoomable, draggable view. */
export function mountDiagram(container, svg) {
  const W = Number(svg.getAttribute("width")) || svg.viewBox.baseVal.width;
  const H = Number(svg.getAttribute("height")) || svg.viewBox.baseVal.height;
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");

  const stage = document.createElement("div");
  stage.className = "diagram-stage";
  stage.append(svg);
  const button = (label, title, onclick, extra = {}) => {
    const b = document.createElement("button");
    Object.assign(b, { type: "button", className: "secondary", textContent: label, title, onclick });
    b.setAttribute("aria-label", title);
    Object.assign(b.dataset, extra);
    return b;
  };
  const active = () => [...svg.querySelectorAll('g.s[data-active="true"]')].at(-1);
  const tools = document.createElement("div");
  tools.className = "diagram-tools";
  tools.append(
    button("−", "Уменьшить", () => zoomBy(1 / 1.4), { zoom: "out" }),
    button("+", "Увеличить", () => zoomBy(1.4), { zoom: "in" }),
    button("Вписать", "Показать схему целиком", () => fit(), { zoom: "fit" }),
  );
  if (active())
    tools.append(button("К текущему", "Текущее состояние в центре", () => focusActive(), { zoom: "active" }));
  const hint = document.createElement("span");
  hint.className = "muted small diagram-hint";
  hint.textContent = "Ctrl + колесо или два пальца — масштаб, перетаскивание — сдвиг";
  tools.append(hint);
  container.replaceChildren(tools, stage);
  container.classList.add("zoomable");

  // The view: top-left corner in drawing units and the scale (screen px per unit).
  let view = { x: 0, y: 0, s: 1 };
  let touched = false;
  const size = () => ({ w: stage.clientWidth || 1, h: stage.clientHeight || 1 });
  const apply = () => {
    const { w, h } = size();
    svg.setAttribute("viewBox", `${view.x} ${view.y} ${w / view.s} ${h / view.s}`);
    container.dataset.scale = view.s.toFixed(3);
  };
  const fitScale = () => {
    const { w, h } = size();
    return Math.min(1, w / W, h / H);
  };
  // The box is as tall as the drawing fitted to its width needs; the page's CSS caps it (max-height).
  const sizeBox = () => {
    const s = Math.min(1, stage.clientWidth / W);
    stage.style.height = `${Math.max(160, Math.ceil(H * s) + 2)}px`;
  };
  function fit() {
    touched = false;
    const s = fitScale();
    const { w, h } = size();
    view = { s, x: -(w / s - W) / 2, y: -(h / s - H) / 2 };
    apply();
  }
  function zoomAt(factor, px, py) {
    const s = Math.max(fitScale() / 2, Math.min(MAX_SCALE, view.s * factor));
    // The drawing point under (px, py) stays under it.
    const ux = view.x + px / view.s;
    const uy = view.y + py / view.s;
    view = { s, x: ux - px / s, y: uy - py / s };
    touched = true;
    apply();
  }
  function zoomBy(factor) {
    const { w, h } = size();
    zoomAt(factor, w / 2, h / 2);
  }
  function focusActive(least = fitScale()) {
    const a = active()?.querySelector("rect");
    if (!a) return;
    const { w, h } = size();
    const b = a.getBBox();
    const root = svg.querySelector("svg > g");
    // Boxes are drawn inside the translated group: its offset from the drawing's origin.
    const t = root?.transform.baseVal.consolidate()?.matrix ?? { e: 0, f: 0 };
    const s = Math.max(least, Math.min(1, (w * 0.9) / b.width, (h * 0.9) / b.height));
    view = { s, x: b.x + t.e + b.width / 2 - w / 2 / s, y: b.y + t.f + b.height / 2 - h / 2 / s };
    touched = true;
    apply();
  }
  // A side panel (data-start="readable") opens at a size one can read when the whole picture
  // would be too small there: around the current state, or at the drawing's top-left corner.
  function start() {
    if (container.dataset.start !== "readable" || fitScale() >= READABLE) return fit();
    if (active()) focusActive(READABLE);
    else ((view = { s: READABLE, x: 0, y: 0 }), apply());
    touched = false;
  }

  stage.addEventListener(
    "wheel",
    (ev) => {
      if (!ev.ctrlKey && !ev.metaKey) return; // a plain wheel scrolls the page
      ev.preventDefault();
      const r = stage.getBoundingClientRect();
      zoomAt(Math.exp(-ev.deltaY / 300), ev.clientX - r.left, ev.clientY - r.top);
    },
    { passive: false },
  );
  stage.addEventListener("dblclick", (ev) => {
    const r = stage.getBoundingClientRect();
    zoomAt(1.6, ev.clientX - r.left, ev.clientY - r.top);
  });
  // One pointer drags, two pinch.
  const pointers = new Map();
  let pinch = null;
  stage.addEventListener("pointerdown", (ev) => {
    stage.setPointerCapture(ev.pointerId);
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    stage.classList.add("dragging");
  });
  stage.addEventListener("pointermove", (ev) => {
    const p = pointers.get(ev.pointerId);
    if (!p) return;
    if (pointers.size === 1) {
      view = { ...view, x: view.x - (ev.clientX - p.x) / view.s, y: view.y - (ev.clientY - p.y) / view.s };
      touched = true;
      apply();
    }
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      const d = Math.hypot(a.x - b.x, a.y - b.y);
      const r = stage.getBoundingClientRect();
      if (pinch) zoomAt(d / pinch, (a.x + b.x) / 2 - r.left, (a.y + b.y) / 2 - r.top);
      pinch = d;
    }
  });
  const up = (ev) => {
    pointers.delete(ev.pointerId);
    if (pointers.size < 2) pinch = null;
    if (!pointers.size) stage.classList.remove("dragging");
  };
  stage.addEventListener("pointerup", up);
  stage.addEventListener("pointercancel", up);

  sizeBox();
  start();
  // A box that changes width (a phone turned, a panel resized) draws the picture whole again
  // unless the person has zoomed or moved it.
  let lastWidth = stage.clientWidth;
  container.diagramObserver?.disconnect(); // the picture this one replaces
  container.diagramObserver = new ResizeObserver(() => {
    if (stage.clientWidth === lastWidth) return;
    lastWidth = stage.clientWidth;
    sizeBox();
    if (touched) apply();
    else start();
  });
  container.diagramObserver.observe(stage);
}
