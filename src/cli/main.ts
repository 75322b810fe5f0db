// The `sluice` command line.
import { Command } from 'commander';
import { type Setting, setting, settings_of } from '../core/settings.ts';
import { text_of, type_text } from '../core/setting_values.ts';
// Commands load their modules on use, so `sluice start` does not pay for client libraries.
function lazy<T>(load: () => Promise<T>): T {
  return new Proxy({} as object, {
    get:
      (_target, name: string) =>
      async (...args: unknown[]) => {
        const commands = (await load()) as unknown as Record<string, (...a: unknown[]) => Promise<void>>;
        return commands[name]!(...args);
      },
  }) as T;
}
const client = lazy(() => import('./client_commands.ts'));
const dlq = lazy(() => import('./dlq_commands.ts'));
const amqp = lazy(() => import('./amqp_commands.ts'));
const transfer = lazy(() => import('./transfer_commands.ts'));
const cluster_commands = lazy(() => import('./cluster_commands.ts'));
const acl = lazy(() => import('./acl_commands.ts'));
const user = lazy(() => import('./user_commands.ts'));
const quota = lazy(() => import('./quota_commands.ts'));
const config = lazy(() => import('./config_commands.ts'));
const run_start = async (flags: import('./start.ts').StartFlags) => (await import('./start.ts')).run_start(flags);

const BOOTSTRAP_DEFAULT = '127.0.0.1:9092';

/** A flag of `sluice start` from its settings-table entry: `--node-id <n>`, or `--no-auto-create`. */
function start_option(s: Setting): { flags: string; help: string } {
  const env = s.names.env;
  if (s.type.kind === 'boolean') {
    const off = s.default === true; // the flag is --no-...
    const help = `${off ? 'turn off: ' : ''}${s.description}`;
    return { flags: s.names.flag!, help: env ? `${help} (${env}=${off ? 'false' : 'true'})` : help };
  }
  const shown = s.type.kind === 'text' && s.type.format === undefined ? '' : ` [${type_text(s.type)}]`;
  const notes = [...(s.default === null ? [] : [`default ${text_of(s.default)}`]), ...(env ? [env] : [])];
  const help = `${s.description}${shown}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
  return { flags: `${s.names.flag} ${s.placeholder ?? '<value>'}`, help };
}

function add_start(program: Command): void {
  const shown = (name: string) => text_of(setting(name).default!);
  const description =
    `run a broker (single node, data in ${shown('data')}, Kafka on ${shown('kafka')}, ` + `HTTP on ${shown('http')})`;
  const command = program.command('start').description(description);
  for (const s of settings_of(null)) {
    if (s.names.flag === undefined) continue;
    const option = start_option(s);
    command.option(option.flags, option.help);
  }
  command.action((flags) => run_start(flags));
}

/** The options every client command takes: where the broker is, output, TLS, SASL login. */
function bootstrap(command: Command): Command {
  return command
    .option('--bootstrap <host:port>', 'a broker to connect to', process.env.SLUICE_BOOTSTRAP ?? BOOTSTRAP_DEFAULT)
    .option('--json', 'machine-readable output')
    .option(
      '--sasl-username <name>',
      'log in with SASL; the password comes from SLUICE_SASL_PASSWORD',
      process.env.SLUICE_SASL_USERNAME,
    )
    .option(
      '--sasl-mechanism <mechanism>',
      'plain, scram-sha-256 (default) or scram-sha-512',
      process.env.SLUICE_SASL_MECHANISM,
    )
    .option(
      '--tls',
      "connect over TLS, trusting the system's certificate authorities",
      process.env.SLUICE_TLS === 'true',
    )
    .option(
      '--tls-ca <file>',
      'connect over TLS, trusting these certificate authorities (PEM)',
      process.env.SLUICE_TLS_CA,
    )
    .option('--tls-cert <file>', 'a client certificate (PEM) for brokers that ask for one', process.env.SLUICE_TLS_CERT)
    .option('--tls-key <file>', "the client certificate's private key (PEM)", process.env.SLUICE_TLS_KEY);
}

function add_topic(program: Command): void {
  const topic = program.command('topic').description('create, list, describe, delete topics');
  bootstrap(
    topic
      .command('create <name>')
      .option('--partitions <n>', 'partition count', '1')
      .option('--replication-factor <n>', "copies of each partition (a cluster; default: the cluster's)")
      .option('--config <name=value...>', 'topic configs'),
  ).action((name, options) => client.topic_create(name, options));
  bootstrap(topic.command('list').option('--internal', 'include internal topics such as __consumer_offsets')).action(
    (options) => client.topic_list(options),
  );
  bootstrap(topic.command('describe <name>')).action((name, options) => client.topic_describe(name, options));
  bootstrap(topic.command('delete <name>')).action((name, options) => client.topic_delete(name, options));
  bootstrap(
    topic.command('purge <name>').description('delete every message the topic holds now (the topic stays)'),
  ).action((name, options) => client.topic_purge(name, options));
  bootstrap(
    topic
      .command('reassign <name>')
      .description('move partitions to other brokers (cluster): the new replicas copy them, then take over')
      .option('--replicas <ids>', 'the brokers to hold the partition, preferred leader first, e.g. 2,3,4')
      .option('--cancel', 'give up the move in progress: back to the replicas from before')
      .option('--list', 'show the moves in progress: all replicas now, those joining and those leaving')
      .option('--partition <n>', 'one partition (default: every partition of the topic)'),
  ).action((name, options) => cluster_commands.topic_reassign(name, options));
  const cluster = program.command('cluster').description('the cluster: brokers, controller, partition health');
  const status = 'brokers, the controller, and partitions without a full ISR or a leader';
  bootstrap(cluster.command('status').description(status)).action((options) =>
    cluster_commands.cluster_status(options),
  );
  bootstrap(
    topic.command('add-partitions <name>').requiredOption('--count <n>', 'the new total partition count'),
  ).action((name, options) => client.topic_add_partitions(name, options));
}

function add_produce_consume(program: Command): void {
  bootstrap(
    program
      .command('produce <topic>')
      .description(
        'send --value, or each line of standard input as a message; progress on standard error when ' +
          'input is piped',
      )
      .option('--key <key>', 'message key')
      .option('--value <value>', 'a single message value')
      .option('--acks <acks>', '-1 (all), 1 or 0 (no acknowledgement: nothing confirms the write)', '-1'),
  ).action((name, options) => client.produce(name, options));
  bootstrap(
    program
      .command('consume <topic>')
      .description(
        'print messages, one value per line (JSON lines with --json); progress on standard error when ' +
          'output is redirected',
      )
      .option(
        '--group <id>',
        'consumer group to join and commit to (default: none; read every partition without a ' +
          'group, committing nothing)',
      )
      .option('--from-beginning', 'start at the earliest offset when the group has no commit')
      .option('--max <n>', 'stop after this many messages')
      .option('--timeout-ms <ms>', 'stop after this long without a message', '10000'),
  ).action((name, options) => client.consume(name, options));
  bootstrap(
    program
      .command('export <topic>')
      .description('write every message of a topic to a JSON-lines file (progress on standard error)')
      .requiredOption('--out <file>', 'the file to create'),
  ).action((name, options) => transfer.export_topic(name, options));
  bootstrap(
    program
      .command('import <topic>')
      .description(
        'send the messages of an export file to a topic, keeping keys, headers and timestamps; already ' +
          'imported ones are skipped',
      )
      .requiredOption('--in <file>', 'an export file'),
  ).action((name, options) => transfer.import_topic(name, options));
}

function add_dlq_and_group(program: Command): void {
  const dead_letters = program.command('dlq').description('dead-letter topics of share groups: list, peek, redrive');
  bootstrap(dead_letters.command('list')).action((options) => dlq.dlq_list(options));
  bootstrap(dead_letters.command('peek <dlq-topic>').option('--max <n>', 'messages to show', '20')).action(
    (name, options) => dlq.dlq_peek(name, options),
  );
  bootstrap(
    dead_letters
      .command('redrive <dlq-topic>')
      .description(
        'send dead letters back to their origin topic (or --to); each is recorded in sluice.dlq.audit ' +
          'and never sent twice',
      )
      .option('--all', 'every dead letter of the topic')
      .option('--offsets <list>', 'only these: OFFSET or PARTITION:OFFSET, comma-separated')
      .option('--to <topic>', "send to this topic instead of each letter's origin"),
  ).action((name, options) => dlq.dlq_redrive(name, options));

  const group = program.command('group').description('list, describe and reset consumer groups');
  bootstrap(group.command('list')).action((options) => client.group_list(options));
  bootstrap(group.command('describe <group>')).action((name, options) => client.group_describe(name, options));
  bootstrap(
    group
      .command('reset-offsets <group>')
      .requiredOption('--topic <topic>', 'topic')
      .requiredOption('--to <where>', 'earliest, latest or an offset'),
  ).action((name, options) => client.group_reset_offsets(name, options));
}

function add_bench(program: Command): void {
  program
    .command('bench')
    .description(
      'run the side-by-side benchmark (see docs/benchmarks.md); options: --profile smoke|standard|full, ' +
        '--systems a,b, --out DIR',
    )
    .allowUnknownOption()
    .helpOption(false)
    .argument('[options...]')
    .action(async (options: string[]) => {
      const { spawn } = await import('node:child_process');
      const path = await import('node:path');
      const root = path.resolve(import.meta.dirname, '..', '..');
      const script = path.join(root, 'bench', 'harness', 'run.ts');
      const { existsSync } = await import('node:fs');
      // The benchmark and its TypeScript loader are development tools: not in the published package.
      if (!existsSync(script)) {
        process.stderr.write('sluice bench: the benchmark runs from a checkout of Sluice (npm install there first)\n');
        process.exitCode = 1;
        return;
      }
      const child = spawn(process.execPath, ['--import', 'tsx', script, ...options], { cwd: root, stdio: 'inherit' });
      await new Promise<void>((resolve) =>
        child.once('exit', (code) => {
          process.exitCode = code ?? 1;
          resolve();
        }),
      );
    });
}

function add_amqp(program: Command): void {
  const group = program.command('amqp').description('the AMQP side of a broker, from its HTTP admin API');
  const what = {
    queues: 'queues with ready and unacknowledged messages and consumers',
    exchanges: 'exchanges',
    bindings: 'bindings of exchanges to queues and exchanges',
    connections: "this broker's AMQP connections",
  } as const;
  for (const [name, description] of Object.entries(what) as Array<[keyof typeof what, string]>) {
    group
      .command(name)
      .description(description)
      .option('--http <host:port>', "the broker's HTTP listener", process.env.SLUICE_HTTP ?? '127.0.0.1:8080')
      .option('--vhost <name>', 'one virtual host (default: every vhost)')
      .option('--tls-ca <file>', 'HTTPS, trusting these certificate authorities (PEM)', process.env.SLUICE_TLS_CA)
      .option(
        '--sasl-username <name>',
        'log in to a broker with users; the password comes from SLUICE_SASL_PASSWORD',
        process.env.SLUICE_SASL_USERNAME,
      )
      .option('--json', 'machine-readable output')
      .action((options) => amqp.amqp_list(name, options));
  }
}

function add_acl(program: Command): void {
  const group = program.command('acl').description('ACLs of a broker started with --authorization (docs/security.md)');
  const with_flags = (command: Command) =>
    bootstrap(command)
      .option('--principal <principal>', 'User:NAME (User:* for anyone)')
      .option('--host <ip>', 'a client address (default: any)')
      .option('--topic <name>', 'a topic (* for all)')
      .option('--group <name>', 'a consumer or share group (* for all)')
      .option('--transactional-id <id>', 'a transactional id (* for all)')
      .option('--cluster', 'the cluster')
      .option('--prefixed', 'the name is a prefix')
      .option('--operation <names>', 'comma-separated: all, read, write, create, delete, alter, describe, ...')
      .option('--deny', 'deny instead of allow');
  with_flags(group.command('add').description('allow (or deny) operations')).action((options) => acl.acl_add(options));
  with_flags(group.command('list').description('the ACLs matching the flags given')).action((options) =>
    acl.acl_list(options),
  );
  with_flags(group.command('remove').description('remove the ACLs matching the flags given')).action((options) =>
    acl.acl_remove(options),
  );
}

function add_user(program: Command): void {
  const group = program.command('user').description('SCRAM users managed while the broker runs (docs/security.md)');
  const mechanism = '--mechanism <name>';
  const which = 'scram-sha-256 or scram-sha-512 (default: both)';
  bootstrap(group.command('add <name>').description('add a user or set its password (from SLUICE_USER_PASSWORD)'))
    .option(mechanism, which)
    .action((name, options) => user.user_add(name, options));
  bootstrap(group.command('remove <name>').description('remove a user; its open connections are closed'))
    .option(mechanism, which)
    .action((name, options) => user.user_remove(name, options));
  bootstrap(group.command('list').description('users and their mechanisms')).action((options) =>
    user.user_list(options),
  );
}

function add_quota(program: Command): void {
  const group = program.command('quota').description('client quotas: byte rates and request time (docs/security.md)');
  const with_flags = (command: Command) =>
    bootstrap(command)
      .option('--user <name>', 'a user (the SASL login or certificate subject)')
      .option('--default-user', 'every user without a quota of its own, each on its own')
      .option('--client-id <id>', 'a client id')
      .option('--default-client-id', 'every client id without a quota of its own, each on its own')
      .option('--producer-byte-rate <bytes>', 'bytes per second produced')
      .option('--consumer-byte-rate <bytes>', 'bytes per second fetched')
      .option('--request-percentage <percent>', 'share of one event loop spent on its requests');
  with_flags(group.command('set').description('set quotas of a user, a client id or both')).action((options) =>
    quota.quota_set(options),
  );
  with_flags(group.command('remove').description('remove the quotas flagged (all when none is)')).action((options) =>
    quota.quota_remove(options),
  );
  with_flags(group.command('list').description('quotas of the entities matching the flags')).action((options) =>
    quota.quota_list(options),
  );
}

function add_config(program: Command): void {
  const group = program
    .command('config')
    .description('configs of a topic, a share group, a broker or the cluster-wide broker defaults');
  const with_flags = (command: Command) =>
    bootstrap(command)
      .option('--topic <name>', 'a topic')
      .option('--group <id>', 'a share group')
      .option('--broker <id>', 'a broker (its dynamic configs: log level, connection limits)')
      .option('--broker-default', 'the cluster-wide broker defaults (topic defaults such as log.retention.ms)');
  with_flags(group.command('describe').description('the configs set (--all: every config and where it comes from)'))
    .option('--all', 'every config, defaults included')
    .action((options) => config.config_describe(options));
  with_flags(group.command('set <name=value...>').description('set configs (dynamic ones, for a broker)')).action(
    (pairs, options) => config.config_set(pairs, options),
  );
  with_flags(group.command('delete <name...>').description('put configs back to their defaults')).action(
    (names, options) => config.config_delete(names, options),
  );
}

export function build_program(): Command {
  const program = new Command('sluice')
    .description('Sluice: a durable message broker speaking the Kafka and AMQP 0-9-1 protocols')
    .showHelpAfterError();
  add_start(program);
  add_topic(program);
  add_produce_consume(program);
  add_dlq_and_group(program);
  add_amqp(program);
  add_acl(program);
  add_user(program);
  add_quota(program);
  add_config(program);
  add_bench(program);
  return program;
}

build_program()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    process.stderr.write(`sluice: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
