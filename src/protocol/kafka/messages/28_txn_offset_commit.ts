// TxnOffsetCommit (key 28): a transactional producer stages a consumer group's offsets with the
// group coordinator; they become visible when the transaction commits and are dropped if it aborts.
// v3+ carries the consumer's group membership so a zombie member's commit can be fenced; from v5 a
// producer of the transaction protocol v2 (KIP-890 part 2) sends it without a prior AddOffsetsToTxn.
import { api_spec, field, struct_array } from '../schema.ts';

export const TXN_OFFSET_COMMIT = api_spec({
  api_key: 28,
  name: 'TxnOffsetCommit',
  request: {
    name: 'TxnOffsetCommitRequest',
    api_key: 28,
    type: 'request',
    valid_versions: '0-5',
    flexible_versions: '3+',
    fields: [
      field('transactional_id', 'string', '0+'),
      field('group_id', 'string', '0+'),
      field('producer_id', 'int64', '0+'),
      field('producer_epoch', 'int16', '0+'),
      field('generation_id', 'int32', '3+', { default: -1 }),
      field('member_id', 'string', '3+', { default: '' }),
      field('group_instance_id', 'string', '3+', { nullable_versions: '3+', default: null }),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('committed_offset', 'int64', '0+'),
              field('committed_leader_epoch', 'int32', '2+', { default: -1 }),
              field('committed_metadata', 'string', '0+', { nullable_versions: '0+' }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
  response: {
    name: 'TxnOffsetCommitResponse',
    api_key: 28,
    type: 'response',
    valid_versions: '0-5',
    flexible_versions: '3+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(field('partition_index', 'int32', '0+'), field('error_code', 'int16', '0+')),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
