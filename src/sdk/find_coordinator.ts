// FindCoordinator, shared by everything in the SDK that talks to a coordinator: consumer groups,
// share groups (key type 0, the group id) and transactions (key type 1, the transactional id);
// and the link a transactional producer keeps to its coordinators.
import type { BrokerConnection, Cluster } from './cluster.ts';
import type { ApiSpec, RequestIn, ResponseOf } from '../protocol/kafka/schema.ts';
import { KafkaProtocolError, check_code } from './errors.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { FIND_COORDINATOR } from '../protocol/kafka/messages/10_find_coordinator.ts';

export const COORDINATOR_KEY_GROUP = 0;
export const COORDINATOR_KEY_TRANSACTION = 1;

export interface CoordinatorAddress {
  node_id: number;
  host: string;
  port: number;
}

/** Asks the broker behind `connection` which broker coordinates `key`; one request, no retry. */
export async function find_coordinator(
  connection: BrokerConnection,
  key: string,
  key_type: typeof COORDINATOR_KEY_GROUP | typeof COORDINATOR_KEY_TRANSACTION,
): Promise<CoordinatorAddress> {
  const { version, response } = await connection.send(FIND_COORDINATOR, 0, 4, {
    key,
    key_type,
    coordinator_keys: [key],
  });
  const entry = version >= 4 ? response.coordinators[0] : response;
  const context = `FindCoordinator for ${key_type === COORDINATOR_KEY_GROUP ? 'group' : 'transactional id'} ${key}`;
  if (!entry) throw new KafkaProtocolError(ErrorCode.COORDINATOR_NOT_AVAILABLE, context);
  check_code(entry.error_code, context, entry.error_message);
  return { node_id: entry.node_id, host: entry.host, port: entry.port };
}

const MOVED_CODES = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE]);

/**
 * The coordinator of one key, found on first use and again after it moved (NOT_COORDINATOR,
 * COORDINATOR_NOT_AVAILABLE, a lost connection). Requests go over the cluster's connection to it.
 */
export class CoordinatorLink {
  private node_id: number | null = null;

  constructor(
    private readonly cluster: Cluster,
    readonly key: string,
    private readonly key_type: typeof COORDINATOR_KEY_GROUP | typeof COORDINATOR_KEY_TRANSACTION,
    /** Runs a request again while it fails with a retriable error (the caller's retry policy). */
    private readonly retry: <T>(work: () => Promise<T>) => Promise<T>,
  ) {}

  /** Sends a request to the coordinator; `code_of` picks the error code an answer carries. */
  request<A extends ApiSpec>(
    api: A,
    min: number,
    max: number,
    body: RequestIn<A>,
    code_of: (response: ResponseOf<A>) => number,
  ): Promise<ResponseOf<A>> {
    return this.retry(async () => {
      let answer: ResponseOf<A>;
      try {
        answer = (await (await this.connection()).send(api, min, max, body)).response;
      } catch (error) {
        this.node_id = null;
        throw error;
      }
      const code = code_of(answer);
      if (MOVED_CODES.has(code)) this.node_id = null;
      check_code(code, `${api.name} for ${this.key}`);
      return answer;
    });
  }

  /** The connection to the coordinator (found first when unknown). */
  async connection(): Promise<BrokerConnection> {
    if (this.node_id === null) {
      const address = await find_coordinator(await this.cluster.any(), this.key, this.key_type);
      if (!this.cluster.brokers.has(address.node_id)) this.cluster.brokers.set(address.node_id, address);
      this.node_id = address.node_id;
    }
    return this.cluster.node(this.node_id);
  }
}
