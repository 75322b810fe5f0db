// Admin: configs of topics and brokers. DescribeConfigs, AlterConfigs (replacing a resource's
// dynamic configs) and IncrementalAlterConfigs (setting or deleting single keys); broker resources
// go to that broker, topic resources to the controller (admin_requests.ts routes and retries).
import {
  AlterConfigOperation,
  ConfigResourceTypes,
  ConfigSource,
  type AlterConfigsResponse,
  type ConfigDescription,
  type DescribeConfigResponse,
  type IncrementalConfigEntry,
  type IncrementalResourceConfig,
  type ResourceConfig,
  type ResourceConfigQuery,
} from './admin_types.ts';
import type { BrokerConnection } from './cluster.ts';
import {
  invalid,
  resource_label,
  resource_outcomes,
  type AdminRequests,
  type ResourceResult,
} from './admin_requests.ts';
import type { ResponseOf, Row } from '../protocol/kafka/schema.ts';
import { DESCRIBE_CONFIGS } from '../protocol/kafka/messages/32_describe_configs.ts';
import { ALTER_CONFIGS } from '../protocol/kafka/messages/33_alter_configs.ts';
import { INCREMENTAL_ALTER_CONFIGS } from '../protocol/kafka/messages/44_incremental_alter_configs.ts';

type DescribedResource = Row<ResponseOf<typeof DESCRIBE_CONFIGS>['results']>;
type DescribedConfig = Row<DescribedResource['configs']>;

/** What AlterConfigs and IncrementalAlterConfigs both answer. */
interface AlterAnswer {
  throttle_time_ms: number;
  responses: readonly ResourceResult[];
}

function check_resources(operation: string, resources: Array<{ type: number; name: string }>): void {
  if (!Array.isArray(resources) || resources.length === 0) {
    throw invalid(`${operation}: resources must be a non-empty array`);
  }
  const types: number[] = Object.values(ConfigResourceTypes);
  const bad_type = resources.find((r) => !types.includes(r?.type));
  if (bad_type) throw invalid(`${operation}: invalid resource type ${JSON.stringify(bad_type.type)}`);
  const bad_name = resources.find(
    (r) => typeof r.name !== 'string' || (r.name === '' && r.type === ConfigResourceTypes.TOPIC),
  );
  if (bad_name) throw invalid(`${operation}: invalid resource name ${JSON.stringify(bad_name.name)}`);
}

/** One config of a DescribeConfigs answer; v0 has no config source, only whether it is the default. */
function description_of(c: DescribedConfig, version: number): ConfigDescription {
  const source = version === 0 ? (c.is_default ? ConfigSource.DEFAULT_CONFIG : ConfigSource.UNKNOWN) : c.config_source;
  return {
    configName: c.name,
    configValue: c.value,
    isDefault: version === 0 ? c.is_default : source === ConfigSource.DEFAULT_CONFIG,
    configSource: source,
    isSensitive: c.is_sensitive,
    readOnly: c.read_only,
    configSynonyms: c.synonyms.map((s) => ({ configName: s.name, configValue: s.value, configSource: s.source })),
  };
}

/** Configs of topics (or brokers); `configNames` absent or empty means all of them. */
export async function describe_configs(
  admin: AdminRequests,
  options: { resources: ResourceConfigQuery[]; includeSynonyms?: boolean },
): Promise<DescribeConfigResponse> {
  const resources = options?.resources;
  check_resources('describeConfigs', resources);
  if (resources.some((r) => r.configNames != null && !Array.isArray(r.configNames))) {
    throw invalid('describeConfigs: configNames must be an array');
  }
  const include_synonyms = Boolean(options.includeSynonyms);
  const results = new Map<number, { row: DescribedResource; version: number }>();
  let throttle = 0;
  await admin.on_config_targets('DescribeConfigs', resources, async (connection, indexes) => {
    const { version, response } = await connection.send(DESCRIBE_CONFIGS, 0, 4, {
      resources: indexes.map((i) => {
        const r = resources[i]!;
        return {
          resource_type: r.type,
          resource_name: r.name,
          configuration_keys: r.configNames?.length ? r.configNames : null,
        };
      }),
      include_synonyms,
      include_documentation: false,
    });
    throttle = Math.max(throttle, response.throttle_time_ms);
    return resource_outcomes(resources, indexes, response.results, (i, row) => results.set(i, { row, version }));
  });
  return {
    resources: resources.map((_, i) => {
      const { row, version } = results.get(i)!;
      return {
        configEntries: row.configs.map((c) => description_of(c, version)),
        errorCode: row.error_code,
        errorMessage: row.error_message ?? null,
        resourceName: row.resource_name,
        resourceType: row.resource_type,
      };
    }),
    throttleTime: throttle,
  };
}

/**
 * Replaces the whole set of dynamic configs of each resource (AlterConfigs): keys left out go back
 * to their defaults. To change single keys, use incrementalAlterConfigs.
 */
export async function alter_configs(
  admin: AdminRequests,
  options: { resources: ResourceConfig[]; validateOnly?: boolean },
): Promise<AlterConfigsResponse> {
  const resources = options?.resources;
  check_resources('alterConfigs', resources);
  for (const r of resources) {
    if (
      !Array.isArray(r.configEntries) ||
      r.configEntries.some((e) => typeof e?.name !== 'string' || typeof e?.value !== 'string')
    ) {
      throw invalid(
        `alterConfigs: configEntries of ${resource_label(r.type, r.name)} must be an array of { name, value } strings`,
      );
    }
  }
  const validate_only = Boolean(options.validateOnly);
  return alter(admin, 'AlterConfigs', resources, async (connection, indexes) => {
    const { response } = await connection.send(ALTER_CONFIGS, 0, 2, {
      resources: indexes.map((i) => ({
        resource_type: resources[i]!.type,
        resource_name: resources[i]!.name,
        configs: resources[i]!.configEntries.map((e) => ({ name: e.name, value: e.value })),
      })),
      validate_only,
    });
    return response;
  });
}

function operation_of(e: IncrementalConfigEntry): number {
  const op = typeof e.operation === 'number' ? e.operation : AlterConfigOperation[e.operation];
  const known: number[] = Object.values(AlterConfigOperation);
  if (!known.includes(op)) {
    throw invalid(`incrementalAlterConfigs: unknown operation ${JSON.stringify(e.operation)} for ${e.name}`);
  }
  if (op !== AlterConfigOperation.DELETE && typeof e.value !== 'string') {
    throw invalid(`incrementalAlterConfigs: ${e.name} needs a string value`);
  }
  return op;
}

/** Sets or deletes single config keys (IncrementalAlterConfigs), leaving the others as they are. */
export async function incremental_alter_configs(
  admin: AdminRequests,
  options: { resources: IncrementalResourceConfig[]; validateOnly?: boolean },
): Promise<AlterConfigsResponse> {
  const resources = options?.resources;
  check_resources('incrementalAlterConfigs', resources);
  for (const r of resources) {
    if (!Array.isArray(r.configEntries) || r.configEntries.some((e) => typeof e?.name !== 'string')) {
      throw invalid(
        `incrementalAlterConfigs: configEntries of ${resource_label(r.type, r.name)} must be an array of ` +
          '{ name, value, operation }',
      );
    }
    r.configEntries.forEach(operation_of);
  }
  const validate_only = Boolean(options.validateOnly);
  return alter(admin, 'IncrementalAlterConfigs', resources, async (connection, indexes) => {
    const { response } = await connection.send(INCREMENTAL_ALTER_CONFIGS, 0, 1, {
      resources: indexes.map((i) => ({
        resource_type: resources[i]!.type,
        resource_name: resources[i]!.name,
        configs: resources[i]!.configEntries.map((e) => ({
          name: e.name,
          config_operation: operation_of(e),
          value: operation_of(e) === AlterConfigOperation.DELETE ? null : (e.value ?? null),
        })),
      })),
      validate_only,
    });
    return response;
  });
}

/** AlterConfigs and IncrementalAlterConfigs: same routing and answer, `send` makes the request. */
async function alter(
  admin: AdminRequests,
  operation: string,
  resources: Array<{ type: number; name: string }>,
  send: (connection: BrokerConnection, indexes: number[]) => Promise<AlterAnswer>,
): Promise<AlterConfigsResponse> {
  const results = new Map<number, ResourceResult>();
  let throttle = 0;
  await admin.on_config_targets(operation, resources, async (connection, indexes) => {
    const response = await send(connection, indexes);
    throttle = Math.max(throttle, response.throttle_time_ms);
    return resource_outcomes(resources, indexes, response.responses, (i, row) => results.set(i, row));
  });
  return {
    resources: resources.map((_, i) => {
      const row = results.get(i)!;
      return {
        errorCode: row.error_code,
        errorMessage: row.error_message ?? null,
        resourceName: row.resource_name,
        resourceType: row.resource_type,
      };
    }),
    throttleTime: throttle,
  };
}
