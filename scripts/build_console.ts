// Builds the web console into console/dist (`npm run build:console`; also run by `npm install`
// through `prepare`). With --if-available it only reports, and succeeds, when the build tools are
// not installed: a production install (`npm ci --omit=dev`) leaves them out and serves the console
// only if console/dist came with the package.
import path from 'node:path';

const CONFIG = path.resolve(import.meta.dirname, '..', 'console', 'vite.config.ts');

async function main(): Promise<void> {
  let vite: typeof import('vite');
  try {
    vite = await import('vite');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND';
    if (!missing || !process.argv.includes('--if-available')) throw error;
    console.warn(
      'sluice: the web console was not built (vite is not installed: development dependencies were left out)',
    );
    return;
  }
  await vite.build({ configFile: CONFIG, logLevel: 'warn' });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
