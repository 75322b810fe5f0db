// DeleteRecords (key 21): moves the log start offset of partitions forward, discarding the records
// before the given offsets; the response gives each partition's new low watermark.
import { api_spec, field, struct_array } from '../schema.ts';

export const DELETE_RECORDS = api_spec({
  api_key: 21,
  name: 'DeleteRecords',
  request: {
    name: 'DeleteRecordsRequest',
    api_key: 21,
    type: 'request',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(field('partition_index', 'int32', '0+'), field('offset', 'int64', '0+')),
            '0+',
          ),
        ),
        '0+',
      ),
      field('timeout_ms', 'int32', '0+'),
    ],
  },
  response: {
    name: 'DeleteRecordsResponse',
    api_key: 21,
    type: 'response',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('low_watermark', 'int64', '0+'),
              field('error_code', 'int16', '0+'),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
