/** Runs `work` over `items` with at most `parallelism_max` in flight; rethrows the first failure. */
export async function run_bounded<T>(items: readonly T[], parallelism_max: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (next < items.length && failure === null) {
      try {
        await work(items[next++]!);
      } catch (error) {
        failure = { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallelism_max, items.length) }, worker));
  if (failure !== null) throw (failure as { error: unknown }).error;
}
