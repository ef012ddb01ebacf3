import { defineConfig } from "vite";

// The app is served by the flotilla binary (internal/hub/dashboard), which embeds dist/.
export default defineConfig({
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { outDir: "dist", emptyOutDir: true, assetsDir: "assets", sourcemap: false },
});
