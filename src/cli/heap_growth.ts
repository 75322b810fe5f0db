// Keeps V8 from running full garbage collections over a small heap while data streams through.
//
// A broker's JavaScript heap is small (about 20 MB) while it allocates hundreds of MB a second of
// ArrayBuffers for socket reads and request frames. V8 sizes the old generation's limit from the
// heap alone (about twice its live size) and starts a mark-compact whenever the old generation
// together with those buffers reaches that limit: at 1 KiB messages a replicated broker ran one
// several times a second and spent a third of its CPU in the collector (docs/benchmarks.md).
//
// `node --initial-old-space-size` would raise the floor, but only when given on the node command
// line, which `npx sluice` and service managers do not reliably pass. Instead the `sluice start`
// process sets V8's growing factor each interval so the next limit is at least
// OLD_GENERATION_FLOOR_BYTES; once the live heap is past half the floor it hands the factor back
// to V8 (percent 0 means V8 chooses). The floor costs at most that much memory in garbage.
import v8 from 'node:v8';

/** The old generation may fill to this before a full collection (when the live heap is smaller). */
export const OLD_GENERATION_FLOOR_BYTES = 256 * 1024 * 1024;
/** How often the live heap size is looked at. */
export const HEAP_GROWTH_INTERVAL_MS = 5000;
/** A new percent is set only when it differs from the current one by more than this share. */
const PERCENT_CHANGE_MIN = 0.1;

/** V8's heap growing percent that puts the next limit at `floor_bytes`; 0 leaves it to V8. */
export function growing_percent_for(heap_used_bytes: number, floor_bytes: number): number {
  if (heap_used_bytes <= 0 || heap_used_bytes * 2 >= floor_bytes) return 0;
  return Math.ceil((floor_bytes / heap_used_bytes - 1) * 100);
}

export interface HeapGrowth {
  /** The percent set last (0: V8's own choice). */
  readonly percent: number;
  stop(): void;
}

export function start_heap_growth(
  floor_bytes = OLD_GENERATION_FLOOR_BYTES,
  interval_ms = HEAP_GROWTH_INTERVAL_MS,
): HeapGrowth {
  let percent = 0;
  const adjust = () => {
    const wanted = growing_percent_for(v8.getHeapStatistics().used_heap_size, floor_bytes);
    const changed =
      wanted === 0 || percent === 0 ? wanted !== percent : Math.abs(wanted - percent) > percent * PERCENT_CHANGE_MIN;
    if (!changed) return;
    percent = wanted;
    v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
  };
  adjust();
  const timer = setInterval(adjust, interval_ms);
  timer.unref();
  return {
    get percent() {
      return percent;
    },
    stop() {
      clearInterval(timer);
      if (percent !== 0) v8.setFlagsFromString('--heap-growing-percent=0');
      percent = 0;
    },
  };
}
