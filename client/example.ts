// The example page's script (client/example.html): a browser program that imports the client
// alone — type-checked with the DOM typings only (client/tsconfig.json), bundled by vite.
import { ClientError, createClient } from "./index";

const form = document.querySelector<HTMLFormElement>("#send")!;
const answer = document.querySelector<HTMLDivElement>("#answer")!;
const log = document.querySelector<HTMLDivElement>("#log")!;

let threadId: string | null = null;

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const data = new FormData(form);
  const token = String(data.get("token") ?? "").trim();
  const text = String(data.get("text") ?? "").trim();
  if (!text) return;
  // Same origin: the dev server proxies /v1 to the API server.
  const api = createClient({ baseUrl: location.origin, ...(token ? { token } : {}) });
  answer.textContent = "";
  log.textContent = "";
  try {
    threadId ??= (await api.clinic.create()).threadId;
    const turn = api.clinic.send(threadId, text);
    for await (const e of turn) {
      log.textContent += `${e.id} ${e.event}\n`;
      if (e.event === "token") answer.textContent += e.data.delta;
      if (e.event === "final") answer.textContent = e.data.reply;
      if (e.event === "error") answer.textContent = `Ошибка: ${e.data.message}`;
    }
    log.textContent += `run ${turn.runId}, thread ${threadId}, connections ${turn.connections}\n`;
  } catch (e) {
    answer.textContent = e instanceof ClientError ? `${e.name}: ${e.message}` : String(e);
  }
});
