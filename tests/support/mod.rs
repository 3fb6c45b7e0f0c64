//! What the integration tests share: the one `ringd` launcher, typed HTTP
//! requests, the problem assertion, the SSE reader, the etcd processes and
//! the CLI's golden-file checks, and a double of the server's read routes. Each test binary declares this module
//! once; the client-only build gets the parts it can compile.

pub mod api;
#[cfg(feature = "server")]
pub mod cli;
pub mod client;
#[cfg(feature = "server")]
pub mod double;
#[cfg(feature = "server")]
pub mod etcd;
#[cfg(feature = "server")]
pub mod etcd_cluster;
#[cfg(feature = "server")]
pub mod problem;
pub mod ringd;
#[cfg(feature = "server")]
pub mod sse;
