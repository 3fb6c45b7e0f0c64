//! What the integration tests share: the `ringd` launchers, the HTTP and
//! SSE helpers, the etcd processes and the CLI's golden-file checks.
//! Each test binary declares this module once.

#[cfg(feature = "server")]
pub mod cli;
pub mod client;
#[cfg(feature = "server")]
pub mod etcd;
#[cfg(feature = "server")]
pub mod etcd_cluster;
#[cfg(feature = "server")]
pub mod etcd_ringd;
#[cfg(feature = "server")]
pub mod ringd;
#[cfg(feature = "server")]
pub mod sse;
