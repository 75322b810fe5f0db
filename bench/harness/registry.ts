// Every system the benchmark knows: Sluice with each client and durability policy, then the peers.
import type { SystemUnderTest, Unavailable } from './types.ts';
import { peer_systems } from './peers/index.ts';
import { type SluiceSystemsOptions, sluice_systems } from './sluice/index.ts';

export async function all_systems(sluice: SluiceSystemsOptions = {}): Promise<Array<SystemUnderTest | Unavailable>> {
  return [...sluice_systems(sluice), ...(await peer_systems())];
}
