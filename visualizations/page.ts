import { escapeXml } from "./text";

/** Self-contained HTML pages around generated SVG diagrams (no external assets, no scripts). */

function shell(title: string, lead: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="ru"><head><meta charset="UTF-8"><meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeXml(title)}</title>
<style>
body{margin:0;padding:24px;background:#f5f6f8;color:#111827;font:14px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 4px}p{color:#6b7280;margin:0 0 12px;max-width:760px}
figure{margin:0 0 16px;background:#fff;border:1px solid #e1e4ea;border-radius:10px;padding:8px;overflow:auto}
figure svg{display:block;max-width:100%;height:auto}
</style></head><body>
<h1>${escapeXml(title)}</h1><p>${escapeXml(lead)}</p>
${body}
</body></html>
`;
}

export function diagramPage(title: string, description: string, svg: string): string {
  return shell(title, description, `<figure>${svg}</figure>`);
}

/** One page with every machine: a heading, its description and its diagram. */
export function galleryPage(
  title: string,
  items: { id: string; title: string; description: string; svg: string }[],
): string {
  // An inline SVG's <style> applies to the whole HTML document: the first diagram's sheet serves
  // every one, so a later diagram carrying the same sheet leaves its copy out.
  const sheetOf = (svg: string) => /<style>[\s\S]*?<\/style>/.exec(svg)?.[0];
  const sheet = items[0] && sheetOf(items[0].svg);
  const body = items.map(
    (i, n) =>
      `<h2 id="${escapeXml(i.id)}">${escapeXml(i.title)}</h2><p>${escapeXml(i.description)}</p><figure>${
        n > 0 && sheet && sheetOf(i.svg) === sheet ? i.svg.replace(sheet, "") : i.svg
      }</figure>`,
  );
  return shell(
    title,
    "Сгенерировано из объектов машин (machine.root): состояния, переходы, события и защитные условия.",
    body.join("\n"),
  );
}
