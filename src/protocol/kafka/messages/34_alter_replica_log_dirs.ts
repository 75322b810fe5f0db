// AlterReplicaLogDirs (key 34): moves replicas to another log directory of their broker; one error
// code per partition. Flexible from version 2.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const ALTER_REPLICA_LOG_DIRS = api_spec({
  api_key: 34,
  name: 'AlterReplicaLogDirs',
  request: {
    name: 'AlterReplicaLogDirsRequest',
    api_key: 34,
    type: 'request',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [
      field(
        'dirs',
        struct_array(
          field('path', 'string', '0+'),
          field(
            'topics',
            struct_array(field('name', 'string', '0+'), field('partitions', array_of('int32'), '0+')),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
  response: {
    name: 'AlterReplicaLogDirsResponse',
    api_key: 34,
    type: 'response',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'results',
        struct_array(
          field('topic_name', 'string', '0+'),
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
