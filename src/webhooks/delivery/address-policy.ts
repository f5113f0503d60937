// Which IP addresses deliveries may go to: public unicast only, unless an operator allowlisted the range.
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** CIDR ranges exempted from the policy (WEBHOOK_PRIVATE_ALLOWLIST). */
export type Allowlist = ReadonlyArray<[Address, number]>;

// Cloud hosts' own services, reachable from their machines only: the metadata service (AWS, GCP, Azure;
// AWS's IPv6 one) and Azure's WireServer, which is a public address.
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '168.63.129.16']);

// IPv4-compatible IPv6 (::a.b.c.d, deprecated) is not in ipaddr.js's special ranges but must not pass.
const EXTRA_REFUSED: Allowlist = [[ipaddr.parse('::'), 96]];

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  uniqueLocal: 'a unique-local address',
  reserved: 'a reserved address',
};

/** Parses CIDR strings; throws an Error naming the first one that is not a valid range. */
export function parseAllowlist(cidrs: readonly string[]): Allowlist {
  return cidrs.map((cidr) => {
    try {
      return ipaddr.parseCIDR(cidr);
    } catch {
      throw new Error(`WEBHOOK_PRIVATE_ALLOWLIST: "${cidr}" is not a valid CIDR range`);
    }
  });
}

function inRanges(address: Address, ranges: Allowlist): boolean {
  return ranges.some(([base, bits]) => base.kind() === address.kind() && address.match(base, bits));
}

/**
 * Why deliveries to this IP address are refused ("a loopback address", ...), or null when allowed.
 * IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry. Never throws: text that is
 * not an IP address is refused.
 */
export function addressRefusal(text: string, allowlist: Allowlist): string | null {
  if (!ipaddr.isValid(text)) return 'not an IP address';
  const address = ipaddr.process(text);
  if (inRanges(address, allowlist)) return null;
  if (METADATA_ADDRESSES.has(address.toNormalizedString()) || METADATA_ADDRESSES.has(address.toString())) {
    return 'a cloud metadata address';
  }
  const range = address.range();
  if (range !== 'unicast') return RANGE_NAMES[range] ?? `a non-public address (${range})`;
  return inRanges(address, EXTRA_REFUSED) ? 'an IPv4-compatible IPv6 address' : null;
}
