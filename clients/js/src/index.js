// @ringd/client: ringd's JavaScript client. Its placement core places keys
// exactly as the server does (./placement/).

export * from './placement/index.js';
