// The addresses of spec 2.4 check 3a: those of the algorithms that place
// by address, nginx's `server host:port` (5.7) and nutcracker's server
// names (5.9.2), and the IP:port of an envoy_ring_hash endpoint (5.10.4).

import { excerpt, fail } from './errors.js';

/** @typedef {import('./node.js').Node} Node */

const HOST = /^[A-Za-z0-9._-]+$/;
const IPV6 = /^\[[0-9A-Fa-f:.]+\]$/;

/**
 * Splits an address as nginx splits a `server` to hash it: at the last ':'
 * that only digits follow; null when there is none.
 * @param {string} address
 * @returns {[string, string] | null}
 */
export function nginxHostPort(address) {
  const i = address.lastIndexOf(':');
  if (i < 0 || !/^[0-9]+$/.test(address.slice(i + 1))) return null;
  return [address.slice(0, i), address.slice(i + 1)];
}

/**
 * Why `address` cannot be an nginx server, or null (5.7): host:port with a
 * decimal port 1..=65,535 and a host name, IPv4 or bracketed IPv6 host, so
 * nothing in it can end, open or comment out a directive; not `unix`.
 * @param {string} address
 * @returns {string | null}
 */
function nginxAddressProblem(address) {
  const split = nginxHostPort(address);
  if (split === null) return 'nginx rings need `host:port`, with a decimal port';
  const [host, port] = split;
  const p = Number(port);
  if (port.length > 5 || p < 1 || p > 65_535) return 'the port must be from 1 to 65535';
  if (!(HOST.test(host) || IPV6.test(host))) {
    return 'the host must be a host name, an IPv4 address or a bracketed IPv6 address';
  }
  if (host.toLowerCase() === 'unix') return 'unix sockets are not supported';
  return null;
}

/**
 * Check 3a for nginx over the active nodes in id order: each address a
 * server nginx takes, then no address twice (the smallest shared address
 * is named, with its first two nodes by id).
 * @param {Node[]} active
 */
export function checkNginxAddresses(active) {
  for (const n of active) {
    const problem = nginxAddressProblem(n.address ?? '');
    if (problem !== null) {
      throw fail('AddressNotServer', `node ${n.id} at ${JSON.stringify(excerpt(n.address ?? ''))}: ${problem}`);
    }
  }
  // Addresses are ASCII here, so string order is byte order.
  const byAddress = [...active].sort((a, b) =>
    (a.address ?? '') < (b.address ?? '') ? -1 : (a.address ?? '') > (b.address ?? '') ? 1 : 0,
  );
  for (let i = 1; i < byAddress.length; i++) {
    const [a, b] = [byAddress[i - 1], byAddress[i]];
    if (a.address === b.address) {
      throw fail('DuplicateAddress', `nodes ${a.id} and ${b.id} share the address ${JSON.stringify(a.address)}`);
    }
  }
}

/**
 * Reads host:port as nutcracker does: a host name or IPv4 address of
 * [A-Za-z0-9._-] and a port 1..=65,535 without leading zeros.
 * @param {string} address
 * @returns {{ host: string, port: number } | string} the parts, or why not
 */
export function twemproxySplitAddress(address) {
  const i = address.lastIndexOf(':');
  if (i < 0) return 'twemproxy rings need `host:port`';
  const host = address.slice(0, i);
  const p = address.slice(i + 1);
  if (!HOST.test(host)) return "the host must be a host name or an IPv4 address (letters, digits, '.', '-', '_')";
  if (!/^[1-9][0-9]{0,4}$/.test(p) || Number(p) > 65_535) {
    return 'the port must be from 1 to 65535, without leading zeros';
  }
  return { host, port: Number(p) };
}

/**
 * The name nutcracker places n by (5.9.2): its hash_key, else its host
 * alone on port 11211, else host:port; null with neither an address nor a
 * hash_key. It checks the address (AddressNotServer), then the name
 * (InvalidServerName): printable ASCII without '#', quotes or backslashes.
 * @param {Node} n
 * @returns {string | null}
 */
export function serverName(n) {
  /** @type {{ host: string, port: number } | null} */
  let parts = null;
  if (n.address !== null) {
    const split = twemproxySplitAddress(n.address);
    if (typeof split === 'string') {
      throw fail('AddressNotServer', `node ${n.id} at ${JSON.stringify(excerpt(n.address))}: ${split}`);
    }
    parts = split;
  }
  if (n.hashKey !== null) {
    if (!/^[!-~]+$/.test(n.hashKey) || /[#"'\\]/.test(n.hashKey)) {
      throw fail(
        'InvalidServerName',
        `node ${n.id} has hash_key ${JSON.stringify(excerpt(n.hashKey))}: a twemproxy server name is printable ASCII without spaces, '#', quotes or backslashes`,
      );
    }
    return n.hashKey;
  }
  if (parts === null) return null;
  return parts.port === 11211 ? parts.host : `${parts.host}:${parts.port}`;
}

/**
 * nutcracker's server order: by length, then bytes (names are ASCII).
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function compareServerNames(a, b) {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The active nodes' names in index order, checked: every one has a name
 * and no two share one (ServerNameTaken, naming the field to change).
 * @param {Node[]} active
 * @returns {string[]}
 */
export function serverNames(active) {
  const names = active.map((n) => {
    const name = serverName(n);
    if (name === null) throw fail('MissingAddress', `node ${n.id} under twemproxy`);
    return name;
  });
  const order = names.map((_, i) => i).sort((a, b) => compareServerNames(names[a], names[b]) || a - b);
  for (let k = 1; k < order.length; k++) {
    const [a, b] = [order[k - 1], order[k]];
    if (names[a] === names[b]) {
      const field = active[a].hashKey !== null || active[b].hashKey !== null ? 'hash_key' : 'address';
      throw fail(
        'ServerNameTaken',
        `${active[a].id} and ${active[b].id} would both be the twemproxy server ${JSON.stringify(names[a])}: give one a distinct ${field}`,
      );
    }
  }
  return names;
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/**
 * An IPv4 address in dotted decimal, as four octets; null otherwise.
 * @param {string} s
 * @returns {number[] | null}
 */
function parseIpv4(s) {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const octets = parts.map((p) => (/^[0-9]{1,3}$/.test(p) ? Number(p) : 256));
  return octets.every((o) => o <= 255) ? octets : null;
}

/**
 * An IPv6 address's eight 16-bit groups: hexadecimal groups, at most one
 * `::`, and an IPv4 address in the last 32 bits; null otherwise.
 * @param {string} s
 * @returns {number[] | null}
 */
function parseIpv6(s) {
  /**
   * @param {string} part
   * @param {boolean} last whether an IPv4 address may end it
   * @returns {number[] | null}
   */
  const groups = (part, last) => {
    if (part === '') return [];
    const out = [];
    const fields = part.split(':');
    for (const [i, f] of fields.entries()) {
      if (HEX_GROUP.test(f)) out.push(Number.parseInt(f, 16));
      else if (last && i === fields.length - 1 && parseIpv4(f) !== null) {
        const [a, b, c, d] = /** @type {number[]} */ (parseIpv4(f));
        out.push((a << 8) | b, (c << 8) | d);
      } else return null;
    }
    return out;
  };
  const halves = s.split('::');
  if (halves.length > 2) return null;
  if (halves.length === 1) {
    const all = groups(s, true);
    return all !== null && all.length === 8 ? all : null;
  }
  const head = groups(halves[0], false);
  const tail = groups(halves[1], true);
  if (head === null || tail === null || head.length + tail.length > 7) return null;
  return [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
}

/**
 * An IPv6 address as Rust's Ipv6Addr writes it, which is Envoy's form
 * (RFC 5952): lowercase groups without leading zeros, the first longest
 * run of two or more zero groups as `::`, and an IPv4-mapped address as
 * `::ffff:a.b.c.d`.
 * @param {number[]} g eight groups
 * @returns {string}
 */
function formatIpv6(g) {
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return `::ffff:${g[6] >> 8}.${g[6] & 0xff}.${g[7] >> 8}.${g[7] & 0xff}`;
  }
  let start = 0;
  let len = 0;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > len) [start, len] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (/** @type {number[]} */ part) => part.map((x) => x.toString(16)).join(':');
  return len > 1 ? `${hex(g.slice(0, start))}::${hex(g.slice(start + len))}` : hex(g);
}

/**
 * Why `address` cannot be an envoy_ring_hash endpoint's, or null (5.10.4):
 * an IP address and a port from 1 to 65535, written as Envoy writes it
 * back (`10.0.0.1:8080`, `[2001:db8::1]:8080`: IPv6 in brackets in RFC
 * 5952 form, no leading zeros, no zone), since EDS resolves no host names.
 * @param {string} address
 * @returns {string | null}
 */
export function envoyAddressProblem(address) {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, Math.max(i, 0));
  const port = address.slice(i + 1);
  /** @type {string | null} */
  let canonical = null;
  let zone = false;
  if (host.startsWith('[') && host.endsWith(']')) {
    const inner = host.slice(1, -1);
    const percent = inner.indexOf('%');
    const groups = parseIpv6(percent < 0 ? inner : inner.slice(0, percent));
    zone = percent >= 0;
    if (groups !== null && (!zone || DECIMAL.test(inner.slice(percent + 1)))) canonical = `[${formatIpv6(groups)}]`;
  } else {
    const octets = parseIpv4(host);
    if (octets !== null) canonical = octets.join('.');
  }
  if (i < 0 || canonical === null || !/^[0-9]{1,5}$/.test(port) || Number(port) > 65_535) {
    return 'an xDS endpoint needs an IP address and a port, as `10.0.0.1:8080` or `[2001:db8::1]:8080` (EDS does not resolve host names)';
  }
  if (Number(port) === 0) return 'the port must be from 1 to 65535';
  if (zone) return "an xDS endpoint's address takes no IPv6 zone";
  if (`${canonical}:${Number(port)}` !== address) {
    return 'write the address as Envoy writes it back: IPv4 without leading zeros, IPv6 in brackets in its shortest lowercase form (RFC 5952)';
  }
  return null;
}
