// AddOffsetsToTxn (key 25): a transactional producer tells its coordinator that the transaction will
// commit a consumer group's offsets, so the group's offsets partition receives the commit or abort
// marker too. The offsets themselves follow in TxnOffsetCommit to the group coordinator.
import { api_spec, field } from '../schema.ts';

export const ADD_OFFSETS_TO_TXN = api_spec({
  api_key: 25,
  name: 'AddOffsetsToTxn',
  request: {
    name: 'AddOffsetsToTxnRequest',
    api_key: 25,
    type: 'request',
    valid_versions: '0-4',
    flexible_versions: '3+',
    fields: [
      field('transactional_id', 'string', '0+'),
      field('producer_id', 'int64', '0+'),
      field('producer_epoch', 'int16', '0+'),
      field('group_id', 'string', '0+'),
    ],
  },
  response: {
    name: 'AddOffsetsToTxnResponse',
    api_key: 25,
    type: 'response',
    valid_versions: '0-4',
    flexible_versions: '3+',
    fields: [field('throttle_time_ms', 'int32', '0+'), field('error_code', 'int16', '0+')],
  },
});
