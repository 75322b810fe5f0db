// The package's public entry: start an embedded broker (the SDK is at `sluice/sdk`).
export {
  startBroker,
  start_broker,
  open_core,
  type CoreOptions,
  type RunningBroker,
  type StartOptions,
} from './compose/start_broker.ts';
export type { Core } from './core/api.ts';
export type { DurabilityPolicy, LogConfig, StorageConfig } from './storage/index.ts';
export { CredentialStore } from './broker/credentials.ts';
