// DescribeLogDirs (key 35): the partitions a broker holds in each log directory, with their sizes;
// a null topic list asks for every one. v3+ adds a top-level error code, v4+ each directory's
// total and usable bytes. Flexible from version 2.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const DESCRIBE_LOG_DIRS = api_spec({
  api_key: 35,
  name: 'DescribeLogDirs',
  request: {
    name: 'DescribeLogDirsRequest',
    api_key: 35,
    type: 'request',
    valid_versions: '0-4',
    flexible_versions: '2+',
    fields: [
      field(
        'topics',
        struct_array(field('topic', 'string', '0+'), field('partitions', array_of('int32'), '0+')),
        '0+',
        { nullable_versions: '0+' },
      ),
    ],
  },
  response: {
    name: 'DescribeLogDirsResponse',
    api_key: 35,
    type: 'response',
    valid_versions: '0-4',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '3+'),
      field(
        'results',
        struct_array(
          field('error_code', 'int16', '0+'),
          field('log_dir', 'string', '0+'),
          field(
            'topics',
            struct_array(
              field('name', 'string', '0+'),
              field(
                'partitions',
                struct_array(
                  field('partition_index', 'int32', '0+'),
                  field('partition_size', 'int64', '0+'),
                  field('offset_lag', 'int64', '0+'),
                  field('is_future_key', 'bool', '0+'),
                ),
                '0+',
              ),
            ),
            '0+',
          ),
          field('total_bytes', 'int64', '4+', { default: -1 }),
          field('usable_bytes', 'int64', '4+', { default: -1 }),
        ),
        '0+',
      ),
    ],
  },
});
