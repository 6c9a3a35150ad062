import { createParser } from "eventsource-parser";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SseDataReader } from "../../llm/sse-data";

function viaReader(pieces: string[]): string[] {
  const out: string[] = [];
  const r = new SseDataReader((d) => out.push(d));
  for (const p of pieces) r.push(p);
  return out;
}

function viaEventsourceParser(pieces: string[]): string[] {
  const out: string[] = [];
  const p = createParser({ onEvent: (m) => out.push(m.data) });
  for (const piece of pieces) p.feed(piece);
  return out;
}

/** Cuts a text at the given positions (sorted, deduplicated). */
function cut(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((a) => a % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let prev = 0;
  for (const p of points) {
    pieces.push(text.slice(prev, p));
    prev = p;
  }
  pieces.push(text.slice(prev));
  return pieces;
}

const eol = fc.constantFrom("\n", "\r\n", "\r");
const value = fc.string({ unit: fc.constantFrom("a", "я", " ", ":", "{", "}", '"', "d", "\u{1F600}") });
const field = fc.oneof(
  fc.tuple(fc.constantFrom("data: ", "data:", "data:  "), value).map(([f, v]) => f + v),
  fc.constant("data"),
  fc.tuple(fc.constantFrom(": ", "event: ", "id: ", "retry: ", "dataset: ", "x"), value).map(([f, v]) => f + v),
);
const event = fc
  .tuple(fc.array(fc.tuple(field, eol), { minLength: 1, maxLength: 4 }), eol)
  .map(([lines, end]) => lines.map(([l, e]) => l + e).join("") + end);

describe("SseDataReader", () => {
  it("yields the same data as eventsource-parser, however the stream is cut", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 12 }), (events, at) => {
        // The closing LF: a stream's last CR may be half of a CRLF, which eventsource-parser
        // waits to see and this reader does not.
        const text = `${events.join("")}\n`;
        expect(viaReader(cut(text, at))).toEqual(viaEventsourceParser([text]));
      }),
      { numRuns: 500 },
    );
  });

  it("reads a chat-completions stream delivered one byte-sized piece at a time", () => {
    const text =
      'data: {"choices":[{"delta":{"content":"При"}}]}\r\n\r\ndata: {"choices":[{"delta":{"content":"вет"}}]}\n\n: keep-alive\n\ndata: [DONE]\n\n';
    expect(viaReader([...text])).toEqual([
      '{"choices":[{"delta":{"content":"При"}}]}',
      '{"choices":[{"delta":{"content":"вет"}}]}',
      "[DONE]",
    ]);
  });

  it("joins multi-line data and keeps an incomplete event until its blank line", () => {
    const out: string[] = [];
    const r = new SseDataReader((d) => out.push(d));
    r.push("data: a\ndata: b\n");
    expect(out).toEqual([]);
    r.push("\r");
    expect(out).toEqual(["a\nb"]);
    r.push("\ndata: c\r\r");
    expect(out).toEqual(["a\nb", "c"]);
  });
});
