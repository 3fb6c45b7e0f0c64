// A bounded memo of owner(key) for string keys over one placement. A
// placement never changes, so an answer stays right for as long as the
// placement is used: no invalidation, only a bound. Worth it where few
// keys are hot: an answer from the memo costs a Map lookup (tens of ns),
// a computed one the key's UTF-8, its hash and the search (docs/
// benchmarks.md, "JavaScript client against npm hashing packages").
// Uint8Array keys are not memoized: a Map compares them by identity.

/** @typedef {import('./placement.js').Placement} Placement */

/** Keys longer than this are computed every time, so that the memo's memory stays small. */
const LONGEST_KEY = 240;
/**
 * The memo judges itself over trials of TRIAL × entries lookups: with
 * fewer than one hit in MIN_HIT_SHARE it is emptied and left unused for
 * the next IDLE × entries lookups, then tried again. A working set larger
 * than the memo (every lookup a miss, which costs a Map lookup and an
 * insertion, about 110 ns here) so costs about a thirtieth of that on
 * average; a small hot set is remembered from its first trial on.
 */
const TRIAL = 2;
const IDLE = 64;
const MIN_HIT_SHARE = 8;

/**
 * owner(key) of one placement, remembering the answers for the last
 * `entries` string keys while that pays.
 */
export class OwnerCache {
  /** @type {Map<string, string | null>} */
  #answers = new Map();
  /** @type {(string | undefined)[]} the keys in insertion order, a ring: the oldest is evicted */
  #order;
  #next = 0;
  #placement;
  /** Whether lookups go through the memo. */
  #on = true;
  /** Lookups left in this trial (on) or idle spell (off). */
  #left;
  #hits = 0;
  #trial;
  #idle;

  /**
   * @param {Placement} placement
   * @param {number} entries how many answers to keep, an integer from 1 to 2^24
   */
  constructor(placement, entries) {
    if (!Number.isInteger(entries) || entries < 1 || entries > 2 ** 24) {
      throw new RangeError(`entries must be an integer from 1 to 16777216, not ${entries}`);
    }
    this.#placement = placement;
    this.#order = new Array(entries);
    this.#trial = TRIAL * entries;
    this.#idle = IDLE * entries;
    this.#left = this.#trial;
  }

  /** The placement answered from. */
  get placement() {
    return this.#placement;
  }

  /** Whether the memo is in use now: false while it would not pay. */
  get active() {
    return this.#on;
  }

  /**
   * The placement's owner(key): the same answer, from the memo when the
   * key is a string seen recently.
   * @param {string | Uint8Array} key
   * @returns {string | null}
   */
  owner(key) {
    if (--this.#left < 0) this.#judge();
    if (!this.#on || typeof key !== 'string' || key.length > LONGEST_KEY) return this.#placement.owner(key);
    const known = this.#answers.get(key);
    if (known !== undefined) {
      this.#hits++;
      return known;
    }
    const answer = this.#placement.owner(key);
    // First in, first out: an LRU would reorder on every hit, which is
    // what makes a hit cost more than the Map lookup.
    const old = this.#order[this.#next];
    if (old !== undefined) this.#answers.delete(old);
    this.#order[this.#next] = key;
    this.#next = (this.#next + 1) % this.#order.length;
    this.#answers.set(key, answer);
    return answer;
  }

  /** Ends a trial or an idle spell; the lookup at hand is the first of the next. */
  #judge() {
    if (this.#on && this.#hits * MIN_HIT_SHARE < this.#trial) {
      this.#on = false;
      this.#answers.clear();
      this.#order.fill(undefined);
      this.#next = 0;
      this.#left = this.#idle - 1;
    } else {
      this.#on = true;
      this.#left = this.#trial - 1;
    }
    this.#hits = 0;
  }
}
