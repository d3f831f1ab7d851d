import { lookup } from 'node:dns/promises';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (injectable, for tests and custom DNS). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The SSRF guard's default resolver: `dns.promises.lookup(host, { all: true, verbatim: true })`. @internal */
export const defaultResolve: HostResolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};
