// The package's public entry: start an embedded broker, or use the storage layer directly.
export { startBroker, start_broker, type RunningBroker, type StartOptions } from './server/start.ts';
export { Broker, type BrokerOptions } from './broker/broker.ts';
export type { DurabilityPolicy, LogConfig, StorageConfig } from './storage/index.ts';
export { CredentialStore } from './broker/credentials.ts';
