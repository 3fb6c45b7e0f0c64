//! The proxies against ringd's placement modes, key by key: each test
//! starts the real proxy on loopback ports with a configuration written
//! from ringd's placement, in front of real backends, and checks that
//! every key is answered by the owner ringd names.

mod haproxy;
mod nginx;
mod support;
mod twemproxy;
