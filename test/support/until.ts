// Polls until `probe` gives a truthy value and returns it; fails naming `what` after `wait_ms`.
export async function until<T>(
  probe: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  what: string,
  wait_ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + wait_ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
