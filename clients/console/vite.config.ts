/// <reference types="vitest/config" />
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { defineConfig } from "vite";

// The dev server proxies the API (REST, streams and the PTY's WebSocket)
// to a running gateway, so `npm run dev` works against any Talon:
// TALON_URL=https://talon.example npm run dev. The gateway refuses a
// session's state-changing calls and WebSockets from an Origin other than
// its own, so the proxy presents the gateway's own origin (dev only; the
// built console is served by the gateway itself, same origin).
const target = process.env.TALON_URL ?? "http://127.0.0.1:8080";
const origin = new URL(target).origin;

export default defineConfig({
  base: "/console/",
  plugins: [svelte()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 600,
  },
  server: {
    proxy: {
      "/v1": {
        target,
        ws: true,
        secure: false,
        configure: (proxy) => {
          proxy.on("proxyReq", (req) => {
            if (req.getHeader("origin")) req.setHeader("origin", origin);
          });
          proxy.on("proxyReqWs", (req) => req.setHeader("origin", origin));
        },
      },
    },
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
