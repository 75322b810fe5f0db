// The Kafka listeners a broker opens. One by default (`kafka`, secured as the TLS and SASL settings
// say); several with `listeners`, each named by its security protocol as Kafka names them, e.g.
// plaintext on loopback for local tools and SASL over TLS on the network address. Each is
// advertised at its own address (`advertised_listeners`), so a client is told, in Metadata and
// FindCoordinator, the addresses of the listener it came in on. Brokers reach one another on the
// first.
import { host_port_of } from '../core/settings.ts';

export const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number];

export interface KafkaListenerSpec {
  /** Its security protocol, which names it: a cluster's brokers advertise each name's address. */
  name: SecurityProtocol;
  host: string;
  port: number;
  /** Where clients are told to connect (default: where it listens). */
  advertised?: { host: string; port: number };
}

export function listener_tls(name: SecurityProtocol): boolean {
  return name === 'SSL' || name === 'SASL_SSL';
}

export function listener_sasl(name: SecurityProtocol): boolean {
  return name === 'SASL_PLAINTEXT' || name === 'SASL_SSL';
}

/** The protocol of the one listener of `kafka`, from whether TLS and logins are on. */
export function protocol_of(tls: boolean, sasl: boolean): SecurityProtocol {
  if (tls) return sasl ? 'SASL_SSL' : 'SSL';
  return sasl ? 'SASL_PLAINTEXT' : 'PLAINTEXT';
}

function parse_entries(text: string, flag: string): Map<SecurityProtocol, { host: string; port: number }> {
  const entries = new Map<SecurityProtocol, { host: string; port: number }>();
  for (const part of text.split(',').map((entry) => entry.trim())) {
    const match = /^([A-Z_]+):\/\/(.+)$/.exec(part);
    const name = match?.[1] as SecurityProtocol | undefined;
    const address = match ? host_port_of(match[2]!) : null;
    if (!name || !address || !SECURITY_PROTOCOLS.includes(name))
      throw new Error(`${flag}: expected PROTOCOL://HOST:PORT (${SECURITY_PROTOCOLS.join(', ')}), got ${part}`);
    if (entries.has(name)) throw new Error(`${flag}: ${name} is named twice`);
    entries.set(name, address);
  }
  return entries;
}

/** The listeners of `--listeners` and `--advertised-listeners` (whose names must be among them). */
export function parse_listeners(listeners: string, advertised: string | null): KafkaListenerSpec[] {
  const bound = parse_entries(listeners, '--listeners');
  const told = advertised ? parse_entries(advertised, '--advertised-listeners') : new Map();
  for (const name of told.keys())
    if (!bound.has(name)) throw new Error(`--advertised-listeners: ${name} is not one of --listeners`);
  return [...bound].map(([name, address]) => ({ name, ...address, advertised: told.get(name) }));
}

/** Why the listeners cannot open with these TLS files and users, or null. */
export function listeners_problem(specs: readonly KafkaListenerSpec[], tls: boolean, sasl: boolean): string | null {
  if (specs.length === 0) return 'no Kafka listener';
  for (const { name } of specs) {
    if (listener_tls(name) && !tls) return `the ${name} listener needs --tls-cert and --tls-key (or --dev-tls)`;
    if (listener_sasl(name) && !sasl) return `the ${name} listener needs users (--sasl-users or --sasl)`;
  }
  return null;
}
