// Entry point for the orchestrator: every Sluice system of the side-by-side benchmark, one per
// client (lean.ts under three durability policies, kafkajs.ts, kcat.ts, sdk.ts, platformatic.ts,
// amqplib in amqp.ts), and those that cannot run here. Each starts its own broker process.
import type { SystemUnderTest, Unavailable } from '../types.ts';
import { KafkajsSystem } from './kafkajs.ts';
import { kcat_unavailable, KcatSystem } from './kcat.ts';
import { LeanSystem } from './lean.ts';
import { PlatformaticSystem } from './platformatic.ts';
import { SdkSystem } from './sdk.ts';
import { SluiceAmqpSystem } from './amqp.ts';
import type { SluiceSystemsOptions } from './system.ts';

export { LEAN_PRODUCE_DEFAULTS } from './lean.ts';
export type { SluiceSystemsOptions } from './system.ts';

export function sluice_systems(options: SluiceSystemsOptions = {}): SystemUnderTest[] {
  return [
    new LeanSystem('fsync', options),
    new LeanSystem('interval', options),
    new LeanSystem('none', options),
    new KafkajsSystem(options),
    new KcatSystem(options),
    new SdkSystem(options),
    new PlatformaticSystem(options),
    new SluiceAmqpSystem(options),
  ];
}

/** Systems that cannot run on this machine, with the reason (kcat missing). */
export function sluice_unavailable(options: SluiceSystemsOptions = {}): Unavailable[] {
  return kcat_unavailable(options);
}
