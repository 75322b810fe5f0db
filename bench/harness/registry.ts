// Every system the benchmark knows: Sluice with each client and durability policy, then the peers.
import type { SystemUnderTest, Unavailable } from './types.ts';
import { peer_systems } from './peers/index.ts';
import { sluice_systems } from './sluice/systems.ts';

export async function all_systems(): Promise<Array<SystemUnderTest | Unavailable>> {
  return [...sluice_systems(), ...(await peer_systems())];
}
