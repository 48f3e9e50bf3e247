import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The app's build: `npm run build:app` (or `buildApp()` in app/build.ts) writes
 * static files to app/dist/, which the local server serves at `/` and the
 * stack uploads to S3. In `vite` dev mode, /api is proxied to a running
 * `footfall start` (FOOTFALL_DEV_API, default http://127.0.0.1:8787).
 */
export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsDir: 'assets',
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/api': { target: process.env.FOOTFALL_DEV_API ?? 'http://127.0.0.1:8787', changeOrigin: false } },
  },
});
