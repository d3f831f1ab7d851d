import { describe, expect, it } from 'vitest';
import { isJobhookError, JobhookError } from '@jobhook/core';
import { DeliveryError } from '../src/delivery-error.js';
import { createSsrfGuard, type HostResolver, type ResolvedAddress } from '../src/ssrf-guard.js';
import { refusalReason, type ReceiverRefusalReason } from '../src/receiver-refusal.js';

/** An injected DNS: `table[host]` answers, unknown names fail with ENOTFOUND; every lookup is logged. */
function fakeDns(table: Record<string, string[]>): HostResolver & { lookups: string[] } {
  const lookups: string[] = [];
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    lookups.push(host);
    const answers = table[host];
    if (answers === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { lookups });
}

const dns = fakeDns({
  'hooks.example.com': ['93.184.216.34'],
  'hooks.example.com.': ['93.184.216.34'],
  'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.5'],
  'mixed-first.example.com': ['192.168.0.10', '93.184.216.34'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'meta.example.com': ['169.254.169.254'],
  'nat64.example.com': ['64:ff9b::a9fe:a9fe'],
  'garbage.example.com': ['not-an-ip'],
  'empty.example.com': [],
});
const guard = createSsrfGuard({ resolve: dns });

/** [name, url, reason]: every row must be refused with ERR_RECEIVER_REFUSED by the default guard. */
const REFUSED: ReadonlyArray<readonly [string, string, ReceiverRefusalReason]> = [
  // IPv4 notations `new URL()` normalizes to 127.0.0.1
  ['decimal 2130706433', 'https://2130706433/', 'address'],
  ['octal 0177.0.0.1', 'https://0177.0.0.1/', 'address'],
  ['hex 0x7f.1', 'https://0x7f.1/', 'address'],
  ['hex 0x7f000001', 'https://0x7f000001/', 'address'],
  ['short 127.1', 'https://127.1/', 'address'],
  ['zero-padded octal 00000177.0.0.1', 'https://00000177.0.0.1/', 'address'],
  ['percent-encoded %31%32%37.0.0.1', 'https://%31%32%37.0.0.1/', 'address'],
  ['full-width digits', 'https://\uff11\uff12\uff17.0.0.1/', 'address'],
  ['trailing dot 127.0.0.1.', 'https://127.0.0.1./', 'address'],
  ['loopback with a port', 'https://127.0.0.1:8443/hook', 'address'],
  ['0 (0.0.0.0)', 'https://0/', 'address'],
  ['unspecified 0.0.0.0', 'https://0.0.0.0/', 'address'],
  ['0.0.0.0/8', 'https://0.1.2.3/', 'address'],
  // IPv4 ranges
  ['private 10/8', 'https://10.0.0.1/', 'address'],
  ['private 172.16/12', 'https://172.31.255.254/', 'address'],
  ['private 192.168/16', 'https://192.168.1.1/', 'address'],
  ['link-local 169.254.169.254 (cloud metadata)', 'https://169.254.169.254/latest/meta-data/', 'address'],
  ['CGNAT 100.64/10', 'https://100.100.100.200/', 'address'],
  ['multicast 224/4', 'https://224.0.0.251/', 'address'],
  ['broadcast', 'https://255.255.255.255/', 'address'],
  ['reserved 240/4', 'https://240.0.0.1/', 'address'],
  ['IETF protocol 192.0.0/24', 'https://192.0.0.170/', 'address'],
  ['benchmarking 198.18/15', 'https://198.19.0.1/', 'address'],
  ['documentation 192.0.2/24', 'https://192.0.2.10/', 'address'],
  ['documentation 198.51.100/24', 'https://198.51.100.7/', 'address'],
  ['documentation 203.0.113/24', 'https://203.0.113.9/', 'address'],
  // IPv6 literals
  ['unspecified [::]', 'https://[::]/', 'address'],
  ['loopback [::1]', 'https://[::1]/', 'address'],
  ['IPv4-mapped [::ffff:127.0.0.1]', 'https://[::ffff:127.0.0.1]/', 'address'],
  ['IPv4-mapped hex [::ffff:7f00:1]', 'https://[::ffff:7f00:1]/', 'address'],
  ['IPv4-mapped long form [0:0:0:0:0:ffff:7f00:1]', 'https://[0:0:0:0:0:ffff:7f00:1]/', 'address'],
  ['IPv4-mapped metadata [::ffff:169.254.169.254]', 'https://[::ffff:169.254.169.254]/', 'address'],
  ['IPv4-mapped public [::ffff:93.184.216.34]', 'https://[::ffff:93.184.216.34]/', 'address'],
  ['IPv4-translated [::ffff:0:7f00:1]', 'https://[::ffff:0:7f00:1]/', 'address'],
  ['IPv4-compatible [::127.0.0.1]', 'https://[::127.0.0.1]/', 'address'],
  ['IPv4-compatible [::a9fe:a9fe]', 'https://[::a9fe:a9fe]/', 'address'],
  ['NAT64 [64:ff9b::7f00:1]', 'https://[64:ff9b::7f00:1]/', 'address'],
  ['NAT64 local-use [64:ff9b:1::a00:1]', 'https://[64:ff9b:1::a00:1]/', 'address'],
  ['6to4 [2002:7f00:1::]', 'https://[2002:7f00:1::]/', 'address'],
  ['Teredo [2001:0:4136:e378:8000:63bf:3fff:fdd2]', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'address'],
  ['link-local [fe80::1]', 'https://[fe80::1]/', 'address'],
  ['link-local with zone id [fe80::1%25eth0]', 'https://[fe80::1%25eth0]/', 'invalid_url'],
  ['unique-local [fd12:3456::1]', 'https://[fd12:3456::1]/', 'address'],
  ['unique-local [fc00::1]', 'https://[fc00::1]/', 'address'],
  ['site-local [fec0::1]', 'https://[fec0::1]/', 'address'],
  ['multicast [ff02::1]', 'https://[ff02::1]/', 'address'],
  ['documentation [2001:db8::1]', 'https://[2001:db8::1]/', 'address'],
  // URL text
  ['userinfo user:pass@', 'https://user:pass@hooks.example.com/', 'userinfo'],
  ['userinfo user@', 'https://user@hooks.example.com/', 'userinfo'],
  ['empty userinfo @', 'https://@hooks.example.com/', 'userinfo'],
  ['userinfo hiding the host', 'https://hooks.example.com@127.0.0.1/', 'userinfo'],
  ['http:// without allowInsecure', 'http://hooks.example.com/', 'scheme'],
  ['ftp://', 'ftp://hooks.example.com/', 'scheme'],
  ['single slash https:/', 'https:/hooks.example.com/', 'scheme'],
  ['backslashes', 'https:\\\\127.0.0.1\\', 'invalid_url'],
  ['leading space', ' https://hooks.example.com/', 'invalid_url'],
  ['tab inside the host', 'https://hooks.exam\tple.com/', 'invalid_url'],
  ['fragment', 'https://hooks.example.com/hook#x', 'fragment'],
  ['too long', `https://hooks.example.com/${'a'.repeat(2100)}`, 'too_long'],
  ['not a URL', 'https://[::1/', 'invalid_url'],
  // host names refused without lookup
  ['localhost', 'https://localhost/', 'host_name'],
  ['localhost. (trailing dot)', 'https://localhost./', 'host_name'],
  ['LOCALHOST (case)', 'https://LOCALHOST/', 'host_name'],
  ['*.localhost', 'https://api.localhost/', 'host_name'],
  ['*.local', 'https://printer.local/', 'host_name'],
  ['*.internal', 'https://metadata.google.internal/computeMetadata/v1/', 'host_name'],
  ['single-label name', 'https://intranet/', 'host_name'],
  // host names resolved by the injected DNS
  ['resolves to public and private (private last)', 'https://mixed.example.com/', 'address'],
  ['resolves to private and public (private first)', 'https://mixed-first.example.com/', 'address'],
  ['resolves to IPv4-mapped loopback', 'https://mapped.example.com/', 'address'],
  ['resolves to the metadata address', 'https://meta.example.com/', 'address'],
  ['resolves to NAT64 of the metadata address', 'https://nat64.example.com/', 'address'],
  ['resolves to something not an IP', 'https://garbage.example.com/', 'address'],
  ['resolves to nothing', 'https://empty.example.com/', 'resolve_failed'],
  ['does not resolve (ENOTFOUND)', 'https://nowhere.example.com/', 'resolve_failed'],
];

describe('SSRF guard: refused receivers', () => {
  it('has a catalogue of at least 30 distinct bypass attempts', () => {
    expect(new Set(REFUSED.map(([, url]) => url)).size).toBe(REFUSED.length);
    expect(REFUSED.length).toBeGreaterThanOrEqual(30);
  });

  it.each(REFUSED)('refuses %s', async (_name, url, reason) => {
    const error = await guard.resolveTarget(url).then(
      () => undefined,
      (err: unknown) => err,
    );
    // Delivery's own error class, and still a jobhook error: core's guard and base class see it.
    expect(error).toBeInstanceOf(DeliveryError);
    expect(error).toBeInstanceOf(JobhookError);
    expect(isJobhookError(error, 'ERR_RECEIVER_REFUSED')).toBe(true);
    expect(error).toMatchObject({ name: 'DeliveryError', code: 'ERR_RECEIVER_REFUSED', status: 400 });
    expect((error as DeliveryError).message).toMatch(/^webhook_receiver refused: /);
    expect(refusalReason(error)).toBe(reason);
  });

  it('refuses literals and local names synchronously, without a lookup', () => {
    const before = dns.lookups.length;
    for (const url of ['https://2130706433/', 'https://[::ffff:7f00:1]/', 'https://localhost./', 'https://user:pass@hooks.example.com/']) {
      expect(() => guard.checkUrl(url)).toThrow(expect.objectContaining({ code: 'ERR_RECEIVER_REFUSED' }));
    }
    expect(dns.lookups.length).toBe(before);
  });

  it('names the reason and the range', async () => {
    const codeOf = (url: string): unknown => {
      try {
        guard.checkUrl(url);
        return 'no error';
      } catch (err) {
        return { reason: refusalReason(err), range: (err as JobhookError).detail?.['range'] };
      }
    };
    expect(codeOf('https://0x7f.1/')).toEqual({ reason: 'address', range: 'loopback' });
    expect(codeOf('https://[::127.0.0.1]/')).toEqual({ reason: 'address', range: 'ipv4Compatible' });
    expect(codeOf('https://[64:ff9b::7f00:1]/')).toEqual({ reason: 'address', range: 'rfc6052' });
    expect(codeOf('https://100.64.0.1/')).toEqual({ reason: 'address', range: 'carrierGradeNat' });
    expect(codeOf('http://hooks.example.com/')).toEqual({ reason: 'scheme', range: undefined });
    expect(codeOf('https://@hooks.example.com/')).toEqual({ reason: 'userinfo', range: undefined });
    await expect(guard.resolveTarget('https://nowhere.example.com/')).rejects.toMatchObject({
      detail: { reason: 'resolve_failed', errorCode: 'ENOTFOUND' },
    });
  });
});

describe('SSRF guard: allowed receivers', () => {
  it.each([
    ['public IPv4 literal', 'https://93.184.216.34/hook', { address: '93.184.216.34', family: 4 }],
    ['public IPv6 literal', 'https://[2606:4700:4700::1111]/hook', { address: '2606:4700:4700::1111', family: 6 }],
    ['host name resolving to a public address', 'https://hooks.example.com/jobhook', { address: '93.184.216.34', family: 4 }],
    ['host name with a trailing dot', 'https://hooks.example.com./jobhook', { address: '93.184.216.34', family: 4 }],
    ['host name resolving to public IPv6', 'https://v6.example.com/', { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 }],
    ['any port, with path and query', 'https://hooks.example.com:8443/a/b?c=d', { address: '93.184.216.34', family: 4 }],
  ] as const)('accepts %s', async (_name, url, expected) => {
    await expect(guard.resolveTarget(url)).resolves.toEqual(expected);
  });

  it('keeps the port and the path for the connection', () => {
    const url = guard.checkUrl('https://HOOKS.example.com:8443/a/b?c=d');
    expect([url.hostname, url.port, url.pathname, url.search]).toEqual(['hooks.example.com', '8443', '/a/b', '?c=d']);
  });

  it('allowInsecure allows http://; allowCidrs and allowPrivate allow local addresses', async () => {
    const local = createSsrfGuard({ allowInsecure: true, allowCidrs: ['127.0.0.0/8', 'fd00::/8'], resolve: dns });
    await expect(local.resolveTarget('http://127.0.0.1:8080/')).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    await expect(local.resolveTarget('http://[fd00::5]/')).resolves.toEqual({ address: 'fd00::5', family: 6 });
    await expect(local.resolveTarget('http://mapped.example.com/')).resolves.toEqual({ address: '::ffff:7f00:1', family: 6 });
    await expect(local.resolveTarget('http://10.0.0.1/')).rejects.toMatchObject({ code: 'ERR_RECEIVER_REFUSED' });
    const open = createSsrfGuard({ allowPrivate: true, resolve: dns });
    await expect(open.resolveTarget('https://10.0.0.1/')).resolves.toEqual({ address: '10.0.0.1', family: 4 });
    await expect(open.resolveTarget('http://10.0.0.1/')).rejects.toMatchObject({ code: 'ERR_RECEIVER_REFUSED' });
  });

  it('localhost is pinned to the allowed loopback addresses, 127.0.0.1 then ::1, without a lookup', async () => {
    const before = dns.lookups.length;
    const v4 = createSsrfGuard({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'], resolve: dns });
    await expect(v4.resolveTarget('http://localhost:3000/webhooks/jobs')).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    await expect(v4.resolveTarget('http://LOCALHOST./x')).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    expect(v4.checkUrl('http://localhost:3000/a').host).toBe('localhost:3000');
    const both = createSsrfGuard({ allowInsecure: true, allowPrivate: true, resolve: dns });
    await expect(both.resolveTarget('http://localhost/')).resolves.toEqual({
      address: '127.0.0.1',
      family: 4,
      fallbacks: [{ address: '::1', family: 6 }],
    });
    const v6 = createSsrfGuard({ allowInsecure: true, allowCidrs: ['::1/128'], resolve: dns });
    await expect(v6.resolveTarget('http://localhost/')).resolves.toEqual({ address: '::1', family: 6 });
    // The name itself is never looked up: the resolver (a hosts file) could point it anywhere.
    expect(dns.lookups.length).toBe(before);
  });

  it('only localhost itself: other local names stay refused with loopback allowed, and localhost without it', async () => {
    const v4 = createSsrfGuard({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'], resolve: dns });
    for (const url of ['http://api.localhost/', 'http://localhost.localdomain/', 'http://localhost.example.internal/', 'http://local/']) {
      await expect(v4.resolveTarget(url)).rejects.toMatchObject({ detail: { reason: 'host_name' } });
    }
    const otherRange = createSsrfGuard({ allowInsecure: true, allowCidrs: ['10.0.0.0/8'], resolve: dns });
    await expect(otherRange.resolveTarget('http://localhost/')).rejects.toMatchObject({ detail: { reason: 'host_name' } });
    await expect(createSsrfGuard({ resolve: dns }).resolveTarget('https://localhost/')).rejects.toMatchObject({
      detail: { reason: 'host_name' },
    });
  });

  it('refuses wrong options at construction', () => {
    for (const bad of [
      { allowCidrs: ['127.0.0.1'] },
      { allowCidrs: ['nope/8'] },
      { allowCidrs: '127.0.0.0/8' as unknown as string[] },
      { allowInsecure: 'yes' as unknown as boolean },
      { maxUrlLength: 0 },
    ]) {
      expect(() => createSsrfGuard(bad)).toThrow(expect.objectContaining({ code: 'ERR_OPTION_INVALID' }));
    }
  });
});
