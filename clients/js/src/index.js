// @ringd/client: the placement core, and a client that follows a ring
// on a ringd server and answers lookups from a verified copy of it.

export * from "./placement/index.js";
export * from "./client/index.js";
