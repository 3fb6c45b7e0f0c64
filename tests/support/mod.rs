//! What the integration tests share: the one `ringd` launcher (a child
//! process, or in this process), typed HTTP requests, the problem
//! assertion, the SSE reader, the etcd processes and two instances on one
//! etcd, the CLI's golden-file checks, `ringd follow` client processes and
//! the rollout checks they serve, `ringd sync` agents, a double of the server's read routes,
//! and a forwarding proxy to put in front of a server. Each test binary
//! declares this module once; the client-only build gets the parts it can
//! compile.

pub(crate) mod api;
#[cfg(feature = "server")]
pub(crate) mod cli;
pub(crate) mod client;
#[cfg(feature = "server")]
pub(crate) mod double;
#[cfg(feature = "server")]
pub(crate) mod etcd;
#[cfg(feature = "server")]
pub(crate) mod etcd_cluster;
#[cfg(feature = "server")]
pub(crate) mod etcd_pair;
#[cfg(feature = "server")]
pub(crate) mod followers;
#[cfg(feature = "server")]
pub(crate) mod in_process;
pub(crate) mod membership;
#[cfg(feature = "server")]
pub(crate) mod problem;
#[cfg(feature = "server")]
pub(crate) mod proxy;
pub(crate) mod ringd;
#[cfg(feature = "server")]
pub(crate) mod rollouts;
#[cfg(feature = "server")]
pub(crate) mod sse;
#[cfg(feature = "server")]
pub(crate) mod sync_agent;
