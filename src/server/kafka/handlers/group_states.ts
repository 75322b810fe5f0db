// Group states as Kafka names them in DescribeGroups and ListGroups.
import type { GroupState } from '../../../core/index.ts';

export const GROUP_STATE_NAMES: Record<GroupState, string> = {
  empty: 'Empty',
  preparing_rebalance: 'PreparingRebalance',
  completing_rebalance: 'CompletingRebalance',
  stable: 'Stable',
  dead: 'Dead',
};

/** A KIP-848 group's states (ListGroups v5), from the classic states the core reports for it. */
export const CONSUMER_GROUP_STATE_NAMES: Record<GroupState, string> = {
  empty: 'Empty',
  preparing_rebalance: 'Assigning',
  completing_rebalance: 'Reconciling',
  stable: 'Stable',
  dead: 'Dead',
};
