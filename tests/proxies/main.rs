//! The proxies against ringd's placement modes, key by key: each test
//! starts the real proxy on loopback ports with a configuration written
//! from ringd's placement, in front of real backends, and checks that
//! every key is answered by the owner ringd names. The `*_sync` tests do
//! it with the file `ringd sync` keeps, through a ring's life.

#[allow(
    dead_code,
    reason = "each test binary uses a different part of tests/support"
)]
#[path = "../support/mod.rs"]
mod support;

mod backends;
mod haproxy;
mod haproxy_sync;
mod loopback;
mod nginx;
mod nginx_sync;
mod sync_cases;
mod sync_driver;
mod twemproxy;
mod twemproxy_sync;
