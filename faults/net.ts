// The fault suite's network: one Linux network namespace per test host (each broker, each etcd
// member, the clients), joined by veth pairs to one bridge, each host with its own address. A
// partition is real packet loss — an nftables rule in each host dropping every packet it sends to
// the hosts cut off from it — not a proxy the code knows about. A degraded link is a host whose
// sending is throttled by tc's token bucket (queueing delay, and drops once its queue is full) and
// loses a share of its packets at random (nftables' numgen); netem is not needed, and many kernels
// lack it. Everything made here is named after the lab and removed by destroy(),
// also when a run fails, and by sweep() when an earlier run could not. Needs root, iproute2 (`ip`,
// `tc`) and nftables (`nft`).
import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Every name this suite gives a namespace or link starts so: sweep() removes what is left. */
const PREFIX = 'slf';
/** Hosts of one lab at most (addresses .1 to .200 of its /24). */
const HOSTS_MAX = 200;

export interface Host {
  name: string;
  namespace: string;
  address: string;
  /** The host's end of its veth pair, inside its namespace. */
  device: string;
}

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

async function in_namespace(namespace: string, command: string, ...args: string[]): Promise<void> {
  await run('ip', ['netns', 'exec', namespace, command, ...args]);
}

/** Why the network faults cannot run here, or null: they need root, iproute2 and nftables. */
export async function network_missing(): Promise<string | null> {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  for (const [command, flag, what] of [
    ['ip', '-V', 'iproute2 (ip)'],
    ['tc', '-V', 'iproute2 (tc)'],
    ['nft', '--version', 'nftables (nft)'],
  ] as const) {
    try {
      await run(command, [flag]);
    } catch {
      return `${what} is not installed`;
    }
  }
  return null;
}

/** How a degraded host sends: at most `rate_kbit`, queueing up to `latency_ms`, losing `loss_percent`. */
export interface Degradation {
  rate_kbit: number;
  latency_ms: number;
  loss_percent: number;
}

/** The nftables table of random loss, apart from the table of cuts (drop_to replaces that one whole). */
const LOSS_TABLE = `${PREFIX}_loss`;

/** Removes every namespace and bridge an earlier run of the suite left behind. */
export async function sweep(): Promise<void> {
  const { stdout } = await run('ip', ['netns', 'list']);
  for (const line of stdout.split('\n')) {
    const name = line.split(' ')[0];
    if (name?.startsWith(`${PREFIX}-`)) await ip('netns', 'del', name).catch(() => undefined);
  }
  // Bridges, and veth ends whose namespace the kernel had not freed yet when it was deleted.
  const links = await run('ip', ['-o', 'link', 'show']);
  for (const match of links.stdout.matchAll(/^\d+: ([^:@]+)/gm)) {
    if (match[1]!.startsWith(PREFIX)) await ip('link', 'del', match[1]!).catch(() => undefined);
  }
}

export class NetworkLab {
  readonly hosts = new Map<string, Host>();
  private readonly bridge: string;
  private destroyed = false;

  /** The harness's address on the lab's network (the bridge's, outside every namespace). */
  readonly harness_address: string;

  /** `lab` (0–254) makes the names and the 10.77.<lab>.0/24 addresses of this lab its own. */
  private constructor(private readonly lab: number) {
    this.bridge = `${PREFIX}br${lab}`;
    this.harness_address = `10.77.${lab}.254`;
  }

  static async create(lab: number, names: readonly string[]): Promise<NetworkLab> {
    if (names.length > HOSTS_MAX) throw new RangeError(`at most ${HOSTS_MAX} hosts`);
    const net = new NetworkLab(lab);
    try {
      await ip('link', 'add', net.bridge, 'type', 'bridge');
      // The bridge's own address is where the harness and its clients reach the hosts from.
      await ip('addr', 'add', `${net.harness_address}/24`, 'dev', net.bridge);
      await ip('link', 'set', net.bridge, 'up');
      for (const [i, name] of names.entries()) await net.add_host(name, i + 1);
    } catch (error) {
      await net.destroy();
      throw error;
    }
    return net;
  }

  private async add_host(name: string, index: number): Promise<void> {
    const namespace = `${PREFIX}-${this.lab}-${name}`;
    const outer = `${PREFIX}${this.lab}h${index}`;
    const device = `${outer}p`;
    const address = `10.77.${this.lab}.${index}`;
    await ip('netns', 'add', namespace);
    this.hosts.set(name, { name, namespace, address, device });
    await ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', device);
    await ip('link', 'set', device, 'netns', namespace);
    await ip('link', 'set', outer, 'master', this.bridge, 'up');
    await ip('-n', namespace, 'addr', 'add', `${address}/24`, 'dev', device);
    await ip('-n', namespace, 'link', 'set', device, 'up');
    await ip('-n', namespace, 'link', 'set', 'lo', 'up');
  }

  host(name: string): Host {
    const host = this.hosts.get(name);
    if (!host) throw new Error(`no host ${name} in this lab`);
    return host;
  }

  /** Starts `command` inside the host's namespace (it sees only the host's address and loopback). */
  spawn(name: string, command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.host(name).namespace, command, ...args], options);
  }

  /**
   * Cuts the network between every two hosts in different groups (hosts in no group keep talking
   * to everyone): each host drops what it sends to the others' addresses.
   */
  async partition(groups: readonly (readonly string[])[]): Promise<void> {
    const pairs: [string, string][] = [];
    groups.forEach((group, g) =>
      groups.slice(g + 1).forEach((other) => group.forEach((a) => other.forEach((b) => pairs.push([a, b])))),
    );
    await this.cut(pairs);
  }

  /**
   * Cuts exactly the links named (both ways) and restores every other one; unlike partition() the
   * cut need not be transitive (a bridge: a and b cut apart, both still reaching c).
   */
  async cut(pairs: readonly (readonly [string, string])[]): Promise<void> {
    const dropped = new Map<string, Set<string>>([...this.hosts.keys()].map((name) => [name, new Set<string>()]));
    for (const [a, b] of pairs) {
      this.host(a);
      this.host(b);
      dropped.get(a)!.add(b);
      dropped.get(b)!.add(a);
    }
    for (const [name, others] of dropped) await this.drop_to(name, [...others]);
  }

  /** Ends every partition and every degraded link. */
  async heal(): Promise<void> {
    for (const host of this.hosts.values()) {
      await this.drop_to(host.name, []);
      await this.restore(host);
    }
  }

  /** Degrades what a host sends to the lab's other hosts (see Degradation); heal() restores it. */
  async degrade(name: string, { rate_kbit, latency_ms, loss_percent }: Degradation): Promise<void> {
    const host = this.host(name);
    await this.restore(host);
    const burst = `${Math.max(2, Math.ceil(rate_kbit / 64))}kb`; // about 1/8 s of sending at the rate
    const { namespace, device } = host;
    const tbf = ['rate', `${rate_kbit}kbit`, 'burst', burst, 'latency', `${latency_ms}ms`];
    await in_namespace(namespace, 'tc', 'qdisc', 'add', 'dev', device, 'root', 'tbf', ...tbf);
    await in_namespace(namespace, 'nft', 'add', 'table', 'inet', LOSS_TABLE);
    const chain = '{ type filter hook output priority 1; policy accept; }';
    await in_namespace(namespace, 'nft', 'add', 'chain', 'inet', LOSS_TABLE, 'out', chain);
    const rule = ['oifname', device, 'numgen', 'random', 'mod', '100', '<', String(loss_percent), 'drop'];
    await in_namespace(namespace, 'nft', 'add', 'rule', 'inet', LOSS_TABLE, 'out', ...rule);
  }

  private async restore({ namespace, device }: Host): Promise<void> {
    await in_namespace(namespace, 'tc', 'qdisc', 'del', 'dev', device, 'root').catch(() => undefined);
    await in_namespace(namespace, 'nft', 'delete', 'table', 'inet', LOSS_TABLE).catch(() => undefined);
  }

  /** The host's own nftables table: dropping what it sends to `others` (none: the table goes). */
  private async drop_to(name: string, others: readonly string[]): Promise<void> {
    const { namespace } = this.host(name);
    await in_namespace(namespace, 'nft', 'delete', 'table', 'inet', PREFIX).catch(() => undefined);
    if (others.length === 0) return;
    const addresses = others.map((other) => this.host(other).address).join(', ');
    await in_namespace(namespace, 'nft', 'add', 'table', 'inet', PREFIX);
    await in_namespace(
      namespace,
      'nft',
      'add',
      'chain',
      'inet',
      PREFIX,
      'out',
      '{ type filter hook output priority 0; policy accept; }',
    );
    await in_namespace(
      namespace,
      'nft',
      'add',
      'rule',
      'inet',
      PREFIX,
      'out',
      'ip',
      'daddr',
      `{ ${addresses} }`,
      'drop',
    );
  }

  /** Removes the lab's namespaces (and with them the veth pairs) and its bridge; safe to call twice. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const host of this.hosts.values()) {
      // The veth pair first: a namespace lingers in the kernel while it still has sockets closing.
      await ip('-n', host.namespace, 'link', 'del', host.device).catch(() => undefined);
      await ip('netns', 'del', host.namespace).catch(() => undefined);
    }
    await ip('link', 'del', this.bridge).catch(() => undefined);
  }
}
