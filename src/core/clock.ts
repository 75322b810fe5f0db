// Time and logging as every part above storage sees them: the same contracts storage uses, so one
// clock and one logger, injected by the composition root, reach every layer (tests substitute a
// ManualClock and the silent logger).
export {
  ManualClock,
  MONOTONIC_CLOCK,
  SILENT_LOGGER,
  SYSTEM_CLOCK,
  type Clock,
  type Logger,
} from '../storage/index.ts';
