// The package's public entry: the SDK (`Sluice` and its clients) and the embedded broker
// (`startBroker`). `sluice/sdk` holds the SDK alone, for programs that never start a broker.
export * from './sdk/index.ts';
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
