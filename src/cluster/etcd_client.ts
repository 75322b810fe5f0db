// The etcd client library, in one place: the rest of the cluster code imports it from here.
import { noop } from 'cockatiel';

export { Etcd3, type Namespace, type Lease } from 'etcd3';
export const noop_policy = noop;
