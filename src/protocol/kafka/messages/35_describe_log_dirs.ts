// DescribeLogDirs (key 35): the partitions a broker holds in each log directory, with their sizes;
// a null topic list asks for every one. v3+ adds a top-level error code, v4+ each directory's
// total and usable bytes. Flexible from version 2, where Sluice adds tagged fields of compaction.
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
                  // Sluice's own, tagged (clients that do not know the tags skip them): a compacted
                  // partition's dirty ratio (-1: not compacted) and its cleaner's work.
                  field('sluice_dirty_ratio', 'float64', '2+', { default: -1, tag: 7000 }),
                  field('sluice_first_dirty_offset', 'int64', '2+', { default: -1, tag: 7001 }),
                  field('sluice_cleaner_bytes_read', 'int64', '2+', { default: 0, tag: 7002 }),
                  field('sluice_cleaner_bytes_written', 'int64', '2+', { default: 0, tag: 7003 }),
                  field('sluice_last_cleaned_ms', 'int64', '2+', { default: -1, tag: 7004 }),
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
