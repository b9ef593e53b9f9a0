import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * The console: built into console/dist, which the api serves on the same origin (CSP script-src
 * 'self', so nothing may be inlined as a script). The dev server proxies /api to a local api.
 */
export default defineConfig({
  plugins: [react()],
  resolve: {
    // The workspace root keeps an older React for a datetime dependency's peer range; one copy of
    // React in the bundle is a hard requirement for hooks, so always resolve it from the console.
    dedupe: ['react', 'react-dom'],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 2500,
  },
  server: {
    port: Number(process.env.CONSOLE_DEV_PORT ?? 5173),
    proxy: {
      '/api': { target: process.env.CONSOLE_API_URL ?? 'http://localhost:8080', changeOrigin: true },
    },
  },
});
