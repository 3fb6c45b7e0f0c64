// @ringd/client: ringd's JavaScript client. Its placement core places keys
// exactly as the server does (./placement/); RingClient follows a ring on
// a ringd server and answers lookups from a verified copy of it
// (./client/).

export * from './placement/index.js';
export * from './client/index.js';
