// Builds the web console into console/dist, which the broker's HTTP listener serves. `npm run
// dev:console` serves it with hot reload and forwards /api to a broker on the default HTTP port.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const DEV_API_TARGET = process.env.SLUICE_HTTP ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // Absolute asset URLs: index.html is also served for deep links such as /topics/orders.
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsDir: 'assets',
  },
  server: { proxy: { '/api': DEV_API_TARGET } },
});
