//! The query of `GET /v1/rings/{ring}/export/{format}`: the version, and
//! the settings of the proxy's configuration that are not placement.

use serde::Deserialize;

/// Which version to render and how; each setting belongs to one format.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "server", into_params(parameter_in = Query))]
pub struct ExportQuery {
    /// The version to render; the current one if omitted.
    #[cfg_attr(feature = "server", param(minimum = 1))]
    pub version: Option<u64>,
    /// nginx: the `upstream` name (1–64 of `A-Za-z0-9._-`); the ring's
    /// name if omitted.
    #[cfg_attr(feature = "server", param(pattern = r"^[A-Za-z0-9._-]{1,64}$"))]
    pub upstream: Option<String>,
    /// nginx: the variable holding the key, e.g. `$arg_key`; defaults to
    /// `$http_x_ringd_key`.
    #[cfg_attr(
        feature = "server",
        param(pattern = r"^\$[A-Za-z_][A-Za-z0-9_]{0,63}$")
    )]
    pub key: Option<String>,
    /// nginx: `keepalive N;` (1–65535), idle connections per worker.
    #[cfg_attr(feature = "server", param(minimum = 1, maximum = 65535))]
    pub keepalive: Option<u32>,
    /// HAProxy: the `backend` name (1–64 of `A-Za-z0-9._-`); the ring's
    /// name if omitted.
    #[cfg_attr(feature = "server", param(pattern = r"^[A-Za-z0-9._-]{1,64}$"))]
    pub backend: Option<String>,
    /// HAProxy: the request header holding the key (1–64 of
    /// `A-Za-z0-9-`); defaults to `X-Ringd-Key`.
    #[cfg_attr(feature = "server", param(pattern = r"^[A-Za-z0-9-]{1,64}$"))]
    pub header: Option<String>,
    /// twemproxy: the pool name (1–64 of `A-Za-z0-9._-`); the ring's
    /// name if omitted.
    #[cfg_attr(feature = "server", param(pattern = r"^[A-Za-z0-9._-]{1,64}$"))]
    pub pool: Option<String>,
    /// twemproxy: `host:port` the pool listens on; defaults to
    /// `127.0.0.1:22121`. The port is 1–65535.
    #[cfg_attr(
        feature = "server",
        param(pattern = r"^[A-Za-z0-9._-]+:[1-9][0-9]{0,4}$")
    )]
    pub listen: Option<String>,
    /// twemproxy: whether the servers speak Redis; defaults to false
    /// (memcached).
    pub redis: Option<bool>,
}
