// Headless Chromium for the console's end-to-end test and its screenshot script: the system's
// Chromium (Debian package `chromium`) driven through playwright-core, which downloads no browser.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
const CONSOLE_INDEX = path.resolve(import.meta.dirname, '..', '..', 'console', 'dist', 'index.html');

/** Quiet, offline, disposable: no updaters, sync or first-run pages, no sandbox (runs as root). */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** Why the browser cannot run here, or null when it can. */
export function why_no_chromium(): string | null {
  if (!fs.existsSync(CHROMIUM))
    return (
      `${CHROMIUM} is missing; ` +
      "install Chromium (Debian/Ubuntu: apt-get install chromium) to run the console's browser tests"
    );
  const probe = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  if (probe.error) return `${CHROMIUM} --version failed: ${probe.error.message}`;
  if (probe.status !== 0) return `${CHROMIUM} --version exited with ${probe.status}: ${probe.stderr.trim()}`;
  return null;
}

/** Why the console cannot be served, or null when its build is there. */
export function why_no_console_build(): string | null {
  return fs.existsSync(CONSOLE_INDEX)
    ? null
    : `${path.relative(process.cwd(), CONSOLE_INDEX)} is missing; run npm run build:console`;
}

export interface ConsoleBrowser {
  browser: Browser;
  context: BrowserContext;
  close(): Promise<void>;
}

/** A browser (playwright gives each launch a fresh temporary profile) with one context, logged in as `login`. */
export async function launch_console_browser(
  viewport = { width: 1280, height: 800 },
  login?: { username: string; password: string },
): Promise<ConsoleBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext({
    viewport,
    deviceScaleFactor: 1,
    locale: 'en-US',
    timezoneId: 'UTC',
    // The answer to the HTTP Basic challenge of a broker with users, as a person types it in.
    ...(login ? { httpCredentials: login } : {}),
  });
  return { browser, context, close: () => browser.close().catch(() => undefined) };
}
