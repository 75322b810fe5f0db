// Group states as Kafka names them in DescribeGroups and ListGroups.
import type { GroupState } from '../../../core/index.ts';

export const GROUP_STATE_NAMES: Record<GroupState, string> = {
  empty: 'Empty',
  preparing_rebalance: 'PreparingRebalance',
  completing_rebalance: 'CompletingRebalance',
  stable: 'Stable',
  dead: 'Dead',
};
