// WriteTxnMarkers (key 27): the transaction coordinator asks partition leaders to append the commit
// or abort markers that close a transaction, once per producer, and learns per partition whether
// each was written. Sent between brokers only.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const WRITE_TXN_MARKERS = api_spec({
  api_key: 27,
  name: 'WriteTxnMarkers',
  request: {
    name: 'WriteTxnMarkersRequest',
    api_key: 27,
    type: 'request',
    valid_versions: '0-1',
    flexible_versions: '1+',
    fields: [
      field(
        'markers',
        struct_array(
          field('producer_id', 'int64', '0+'),
          field('producer_epoch', 'int16', '0+'),
          field('transaction_result', 'bool', '0+'),
          field(
            'topics',
            struct_array(field('name', 'string', '0+'), field('partition_indexes', array_of('int32'), '0+')),
            '0+',
          ),
          // lets a leader refuse markers from a coordinator that has since lost its partition
          field('coordinator_epoch', 'int32', '0+'),
        ),
        '0+',
      ),
    ],
  },
  response: {
    name: 'WriteTxnMarkersResponse',
    api_key: 27,
    type: 'response',
    valid_versions: '0-1',
    flexible_versions: '1+',
    fields: [
      field(
        'markers',
        struct_array(
          field('producer_id', 'int64', '0+'),
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
        ),
        '0+',
      ),
    ],
  },
});
