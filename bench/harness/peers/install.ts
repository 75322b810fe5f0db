// Finding a peer broker's server executable, installing its Debian package when it is missing (as
// root, with apt-get), and naming the npm client package a driver uses, with its version.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

/** apt-get may take a while on a fresh machine. */
const APT_TIMEOUT_MS = 10 * 60_000;

const require = createRequire(import.meta.url);

/** "name version" of an installed npm package, for SystemUnderTest.client. */
export function package_label(name: string): string {
  try {
    const pkg = require(`${name}/package.json`) as { version?: string };
    return `${name} ${pkg.version ?? '?'}`;
  } catch {
    // Packages whose exports map hides package.json: read it from node_modules directly.
    try {
      const main = require.resolve(name);
      let dir = path.dirname(main);
      for (let i = 0; i < 8; i++) {
        const file = path.join(dir, 'package.json');
        if (fs.existsSync(file)) {
          const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
          if (pkg.name === name) return `${name} ${pkg.version ?? '?'}`;
        }
        dir = path.dirname(dir);
      }
    } catch {
      /* fall through */
    }
    return name;
  }
}

export function run_file(
  file: string,
  args: string[],
  timeout_ms: number,
  env?: NodeJS.ProcessEnv,
): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { timeout: timeout_ms, env: env ?? process.env, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ ok: !error, output: `${stdout}${stderr}${error ? `\n${error.message}` : ''}` });
      },
    );
  });
}

const SEARCH_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Absolute path of an executable: an absolute path as given, else looked up in PATH and the usual dirs. */
export function find_executable(name: string): string | undefined {
  const candidates = path.isAbsolute(name)
    ? [name]
    : [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...SEARCH_DIRS].map((dir) =>
        path.join(dir, name),
      );
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/**
 * Makes sure `executable` exists, installing Debian package `apt_package` when it does not and we
 * are root (apt-get install; on failure apt-get update and one more install). Returns the
 * executable's path, or the reason it is not available.
 */
export async function ensure_executable(
  executable: string,
  apt_package: string,
): Promise<{ path: string } | { reason: string }> {
  const found = find_executable(executable);
  if (found) return { path: found };
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return {
      reason:
        `${executable} not found, and installing Debian package ${apt_package} needs root ` +
        `(run: apt-get install -y ${apt_package})`,
    };
  }
  const apt = find_executable('apt-get');
  if (!apt) return { reason: `${executable} not found and apt-get is not available to install ${apt_package}` };
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let result = await run_file(apt, ['install', '-y', apt_package], APT_TIMEOUT_MS, env);
  if (!result.ok) {
    const update = await run_file(apt, ['update'], APT_TIMEOUT_MS, env);
    if (!update.ok)
      return { reason: `apt-get update failed while installing ${apt_package}: ${tail(update.output, 400)}` };
    result = await run_file(apt, ['install', '-y', apt_package], APT_TIMEOUT_MS, env);
  }
  if (!result.ok) return { reason: `apt-get install -y ${apt_package} failed: ${tail(result.output, 400)}` };
  const installed = find_executable(executable);
  return installed ? { path: installed } : { reason: `installed ${apt_package} but ${executable} is still missing` };
}

export function tail(text: string, chars: number): string {
  const trimmed = text.trim();
  return trimmed.length <= chars ? trimmed : `…${trimmed.slice(-chars)}`;
}
