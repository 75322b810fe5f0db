// What every partition log of a Storage shares: the I/O boundary, the caches, the flush scheduler,
// the clock, the logger and the storage settings.
import type { FileIO } from './file_io.ts';
import type { HandleCache } from './handle_cache.ts';
import type { FlushScheduler } from './flush_scheduler.ts';
import type { TailCache } from './tail_cache.ts';
import type { IndexCache } from './index_cache.ts';
import type { Clock, Logger } from './clock.ts';
import type { StorageConfig } from './config.ts';

export interface LogContext {
  io: FileIO;
  handles: HandleCache;
  flusher: FlushScheduler;
  tail_cache: TailCache;
  index_cache: IndexCache;
  clock: Clock;
  logger: Logger;
  storage: StorageConfig;
  /** Makes the current log start offsets durable (delete-records, retention). */
  persist_log_start(): Promise<void>;
  /** Makes where each log's cleaner stopped durable (cleaner-offset-checkpoint). */
  persist_cleaner_offsets(): Promise<void>;
}
