// Serves client/example.html with the client compiled on the fly, and proxies the API to the
// server, so the page calls it from its own origin: `npx vite --config client/vite.config.mjs`,
// then open http://127.0.0.1:5173/example.html (the server: `npm start`, on 127.0.0.1:3000, or API_URL).
import { fileURLToPath } from "node:url";

export default {
  root: fileURLToPath(new URL(".", import.meta.url)),
  server: {
    host: "127.0.0.1",
    port: 5173,
    proxy: { "/v1": { target: process.env.API_URL ?? "http://127.0.0.1:3000", changeOrigin: true } },
  },
};
