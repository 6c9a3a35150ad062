/**
 * Splits a knowledge-base document (Markdown or plain text) into chunks for full-text search:
 * by heading first, then by paragraph, so that a fragment shown to the model stays on one topic.
 */
export interface Chunk {
  ord: number;
  heading: string;
  text: string;
}

export const MAX_CHUNK_CHARS = 700;

function splitLong(paragraph: string, max: number): string[] {
  if (paragraph.length <= max) return [paragraph];
  const sentences = paragraph.match(/[^.!?…\n]+[.!?…]*\s*/g) ?? [paragraph];
  const out: string[] = [];
  let cur = "";
  for (const s of sentences) {
    if (cur && cur.length + s.length > max) {
      out.push(cur.trim());
      cur = "";
    }
    // A single sentence longer than max is cut hard; better a cut fragment than a lost one.
    let rest = s;
    while (rest.length > max) {
      out.push(rest.slice(0, max).trim());
      rest = rest.slice(max);
    }
    cur += rest;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

export function chunkDocument(title: string, body: string, max = MAX_CHUNK_CHARS): Chunk[] {
  const sections: { heading: string; lines: string[] }[] = [{ heading: title, lines: [] }];
  for (const line of body.replace(/\r\n?/g, "\n").split("\n")) {
    const h = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (h) sections.push({ heading: h[1]!, lines: [] });
    else sections.at(-1)!.lines.push(line);
  }
  const chunks: Chunk[] = [];
  for (const sec of sections) {
    const paragraphs = sec.lines
      .join("\n")
      .split(/\n\s*\n/)
      .map((p) => p.trim())
      .filter(Boolean);
    let cur = "";
    const flush = () => {
      if (cur.trim()) chunks.push({ ord: chunks.length, heading: sec.heading, text: cur.trim() });
      cur = "";
    };
    for (const p of paragraphs.flatMap((p) => splitLong(p, max))) {
      if (cur && cur.length + p.length + 2 > max) flush();
      cur = cur ? `${cur}\n\n${p}` : p;
    }
    flush();
  }
  return chunks;
}
