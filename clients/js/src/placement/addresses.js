// The addresses and names of the algorithms that place by address (spec
// 2.4 check 3a): nginx's `server host:port` (5.7) and nutcracker's server
// names (5.9.2).

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
