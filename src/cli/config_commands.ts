// `sluice config describe|set|delete`: the configs of a topic, a share group, a broker or the
// cluster-wide broker defaults through the SDK's admin (DescribeConfigs, IncrementalAlterConfigs).
import { AlterConfigOperation, ConfigResourceTypes, ConfigSource, type ConfigDescription } from '../sdk/index.ts';
import { print, with_admin, type ClientFlags } from './client_support.ts';

export interface ConfigFlags extends ClientFlags {
  topic?: string;
  group?: string;
  broker?: string;
  brokerDefault?: boolean;
  /** describe: every config, not only those set. */
  all?: boolean;
}

const SOURCE_NAMES: Readonly<Record<number, string>> = {
  [ConfigSource.TOPIC_CONFIG]: 'topic',
  [ConfigSource.DYNAMIC_BROKER_CONFIG]: 'broker (dynamic)',
  [ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]: 'cluster default (dynamic)',
  [ConfigSource.STATIC_BROKER_CONFIG]: 'start setting',
  [ConfigSource.DEFAULT_CONFIG]: 'default',
  8: 'group',
};

/** The one resource the flags name. */
function resource_of(flags: ConfigFlags): { type: number; name: string; label: string } {
  const named = [
    flags.topic !== undefined && { type: ConfigResourceTypes.TOPIC, name: flags.topic, label: `topic ${flags.topic}` },
    flags.group !== undefined && { type: ConfigResourceTypes.GROUP, name: flags.group, label: `group ${flags.group}` },
    flags.broker !== undefined && {
      type: ConfigResourceTypes.BROKER,
      name: flags.broker,
      label: `broker ${flags.broker}`,
    },
    flags.brokerDefault === true && {
      type: ConfigResourceTypes.BROKER,
      name: '',
      label: 'the cluster-wide broker defaults',
    },
  ].filter((r) => r !== false);
  if (named.length !== 1) throw new Error('name one resource: --topic, --group, --broker or --broker-default');
  return named[0]!;
}

/** `name=value` pairs of the command line. */
function pairs_of(pairs: readonly string[]): Array<{ name: string; value: string }> {
  if (pairs.length === 0) throw new Error('give at least one name=value');
  return pairs.map((pair) => {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`expected name=value, got ${JSON.stringify(pair)}`);
    return { name: pair.slice(0, at), value: pair.slice(at + 1) };
  });
}

function line(entry: ConfigDescription): string {
  const notes = [SOURCE_NAMES[entry.configSource] ?? `source ${entry.configSource}`];
  if (entry.readOnly) notes.push('read-only');
  return `${entry.configName}=${entry.configValue ?? ''}  (${notes.join(', ')})`;
}

export async function config_describe(flags: ConfigFlags): Promise<void> {
  const resource = resource_of(flags);
  const answer = await with_admin(flags, (admin) =>
    admin.describeConfigs({ resources: [{ type: resource.type, name: resource.name }], includeSynonyms: false }),
  );
  const described = answer.resources[0]!;
  if (described.errorCode !== 0) throw new Error(`${resource.label}: ${described.errorMessage ?? described.errorCode}`);
  const shown = described.configEntries.filter(
    (entry) => flags.all || entry.configSource !== ConfigSource.DEFAULT_CONFIG,
  );
  print(flags, shown, () =>
    shown.length === 0
      ? `${resource.label}: every config at its default (--all lists them)`
      : shown.map(line).join('\n'),
  );
}

async function alter(flags: ConfigFlags, entries: Array<{ name: string; value?: string; operation: number }>) {
  const resource = resource_of(flags);
  const answer = await with_admin(flags, (admin) =>
    admin.incrementalAlterConfigs({
      resources: [{ type: resource.type, name: resource.name, configEntries: entries }],
    }),
  );
  const result = answer.resources[0]!;
  if (result.errorCode !== 0) throw new Error(`${resource.label}: ${result.errorMessage ?? result.errorCode}`);
  return resource;
}

export async function config_set(pairs: string[], flags: ConfigFlags): Promise<void> {
  const set = pairs_of(pairs);
  const resource = await alter(
    flags,
    set.map(({ name, value }) => ({ name, value, operation: AlterConfigOperation.SET })),
  );
  print(flags, { resource: resource.label, set }, () =>
    set.map(({ name, value }) => `${resource.label}: ${name}=${value}`).join('\n'),
  );
}

export async function config_delete(names: string[], flags: ConfigFlags): Promise<void> {
  if (names.length === 0) throw new Error('name at least one config');
  const resource = await alter(
    flags,
    names.map((name) => ({ name, operation: AlterConfigOperation.DELETE })),
  );
  print(
    flags,
    { resource: resource.label, deleted: names },
    () => `${resource.label}: ${names.join(', ')} back to their defaults`,
  );
}
