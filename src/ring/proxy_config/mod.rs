//! A version's placement written as a proxy's configuration: the `upstream`
//! block of nginx, the `backend` section of HAProxy, or the pool of
//! twemproxy. Each proxy then places every key where ringd does (spec
//! 5.7 to 5.9). The output depends only on the version and the options,
//! so the same request always renders the same bytes. Nothing free-form
//! reaches the file: every name and address written is checked against
//! the characters its proxy reads literally.

mod haproxy;
mod nginx;
mod twemproxy;

use std::fmt;
use std::str::FromStr;

use crate::placement::{Algorithm, Node, Placement};

use super::RingName;

/// The proxies whose configuration ringd writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyFormat {
    /// nginx's `upstream` block with `hash … consistent`.
    Nginx,
    /// HAProxy's `backend` section with `hash-type consistent`.
    Haproxy,
    /// twemproxy's (nutcracker's) YAML pool with `distribution: ketama`.
    Twemproxy,
}

impl ProxyFormat {
    /// Every format, in the order the API lists them.
    pub const ALL: [ProxyFormat; 3] = [Self::Nginx, Self::Haproxy, Self::Twemproxy];

    /// The name in the URL and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Nginx => "nginx",
            Self::Haproxy => "haproxy",
            Self::Twemproxy => "twemproxy",
        }
    }

    /// The placement algorithm whose placement this proxy reproduces.
    pub fn algorithm(self) -> Algorithm {
        match self {
            Self::Nginx => Algorithm::Nginx,
            Self::Haproxy => Algorithm::Haproxy,
            Self::Twemproxy => Algorithm::Twemproxy,
        }
    }
}

impl fmt::Display for ProxyFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ProxyFormat {
    type Err = ExportRefusal;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| ExportRefusal::Invalid {
                field: "format",
                message: format!(
                    "unknown export format `{}`: expected nginx, haproxy or twemproxy",
                    crate::placement::error::excerpt(s)
                ),
            })
    }
}

/// The settings of an export that are not placement, as given in a
/// request; [`ExportOptions::check`] gives each its default and refuses
/// those that do not belong to the format or could change the file's
/// meaning.
#[derive(Debug, Clone, Default)]
pub struct ExportSettings {
    /// nginx: the `upstream` name; defaults to the ring's name.
    pub upstream: Option<String>,
    /// nginx: the variable that holds the key; defaults to
    /// `$http_x_ringd_key`.
    pub key: Option<String>,
    /// nginx: idle keep-alive connections per worker (`keepalive N;`).
    pub keepalive: Option<u32>,
    /// HAProxy: the `backend` name; defaults to the ring's name.
    pub backend: Option<String>,
    /// HAProxy: the request header that carries the key; defaults to
    /// `X-Ringd-Key`.
    pub header: Option<String>,
    /// twemproxy: the pool name; defaults to the ring's name.
    pub pool: Option<String>,
    /// twemproxy: where the pool listens; defaults to `127.0.0.1:22121`.
    pub listen: Option<String>,
    /// twemproxy: whether the servers speak Redis; defaults to false
    /// (memcached).
    pub redis: Option<bool>,
}

/// Checked settings of one format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportOptions {
    /// An nginx `upstream` block.
    Nginx {
        /// Its name.
        upstream: String,
        /// The key variable, `$name`.
        key: String,
        /// `keepalive N;`, if any.
        keepalive: Option<u32>,
    },
    /// A HAProxy `backend` section.
    Haproxy {
        /// Its name.
        backend: String,
        /// The key's header.
        header: String,
    },
    /// A twemproxy pool.
    Twemproxy {
        /// Its name.
        pool: String,
        /// `host:port` it listens on.
        listen: String,
        /// Redis rather than memcached.
        redis: bool,
    },
}

/// Why a version cannot be exported as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportRefusal {
    /// A setting that is malformed or belongs to another format (400).
    #[error("{message}")]
    Invalid {
        /// The query parameter.
        field: &'static str,
        /// What is wrong, for a person.
        message: String,
    },
    /// The version cannot be written for this proxy (422).
    #[error("{0}")]
    Unexportable(String),
}

fn invalid(field: &'static str, message: impl Into<String>) -> ExportRefusal {
    ExportRefusal::Invalid {
        field,
        message: message.into(),
    }
}

/// Whether `s` is 1 to 64 characters of `[A-Za-z0-9._-]`: a name every
/// one of the three proxies reads literally.
fn plain_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

impl ExportOptions {
    /// Checks `settings` for `format`, with the defaults of a ring named
    /// `ring`.
    pub fn check(
        format: ProxyFormat,
        ring: &RingName,
        settings: ExportSettings,
    ) -> Result<Self, ExportRefusal> {
        let ExportSettings {
            upstream,
            key,
            keepalive,
            backend,
            header,
            pool,
            listen,
            redis,
        } = settings;
        let given: [(&'static str, bool, ProxyFormat); 8] = [
            ("upstream", upstream.is_some(), ProxyFormat::Nginx),
            ("key", key.is_some(), ProxyFormat::Nginx),
            ("keepalive", keepalive.is_some(), ProxyFormat::Nginx),
            ("backend", backend.is_some(), ProxyFormat::Haproxy),
            ("header", header.is_some(), ProxyFormat::Haproxy),
            ("pool", pool.is_some(), ProxyFormat::Twemproxy),
            ("listen", listen.is_some(), ProxyFormat::Twemproxy),
            ("redis", redis.is_some(), ProxyFormat::Twemproxy),
        ];
        if let Some((field, _, owner)) = given.iter().find(|(_, set, f)| *set && *f != format) {
            return Err(invalid(
                field,
                format!("`{field}` applies to {owner} exports only, not to {format}"),
            ));
        }
        let name = |field: &'static str, value: Option<String>| match value {
            None => Ok(ring.to_string()),
            Some(v) if plain_name(&v) => Ok(v),
            Some(_) => Err(invalid(
                field,
                format!("`{field}` must be 1 to 64 characters of A-Z a-z 0-9 . _ -"),
            )),
        };
        Ok(match format {
            ProxyFormat::Nginx => Self::Nginx {
                upstream: name("upstream", upstream)?,
                key: nginx::key_variable(key)?,
                keepalive: match keepalive {
                    Some(k) if !(1..=65_535).contains(&k) => {
                        return Err(invalid("keepalive", "`keepalive` must be from 1 to 65535"))
                    }
                    k => k,
                },
            },
            ProxyFormat::Haproxy => Self::Haproxy {
                backend: name("backend", backend)?,
                header: haproxy::key_header(header)?,
            },
            ProxyFormat::Twemproxy => Self::Twemproxy {
                pool: name("pool", pool)?,
                listen: twemproxy::listen_address(listen)?,
                redis: redis.unwrap_or(false),
            },
        })
    }

    /// The proxy these options are for.
    pub fn format(&self) -> ProxyFormat {
        match self {
            Self::Nginx { .. } => ProxyFormat::Nginx,
            Self::Haproxy { .. } => ProxyFormat::Haproxy,
            Self::Twemproxy { .. } => ProxyFormat::Twemproxy,
        }
    }
}

/// Renders version `version` of `ring`, whose placement is `placement`,
/// as `options` says. The first line is a comment naming the ring, the
/// version and the fingerprint; then the active nodes in id order. A
/// drained or joining node is left out: it owns nothing, and a proxy
/// would send it keys (nginx keeps a `down` server's points).
pub fn render(
    ring: &RingName,
    version: u64,
    placement: &Placement,
    options: &ExportOptions,
) -> Result<String, ExportRefusal> {
    let format = options.format();
    let algorithm = placement.config().algorithm;
    if algorithm != format.algorithm() {
        return Err(ExportRefusal::Unexportable(format!(
            "ring `{ring}` places keys with `{algorithm}`, which {format} does not compute: \
             only a `{}` ring can be exported for {format} (change its algorithm first)",
            format.algorithm()
        )));
    }
    let head = format!(
        "# ringd ring {ring} version {version} fingerprint {} ({format})\n",
        placement.fingerprint()
    );
    let body = match options {
        ExportOptions::Nginx {
            upstream,
            key,
            keepalive,
        } => nginx::render(placement, upstream, key, *keepalive)?,
        ExportOptions::Haproxy { backend, header } => haproxy::render(placement, backend, header)?,
        ExportOptions::Twemproxy {
            pool,
            listen,
            redis,
        } => twemproxy::render(placement, pool, listen, *redis)?,
    };
    Ok(head + &body)
}

/// The address of an active node, which every export writes.
fn address_of(node: &Node, format: ProxyFormat) -> Result<&str, ExportRefusal> {
    node.address.as_ref().map(|a| a.as_str()).ok_or_else(|| {
        ExportRefusal::Unexportable(format!(
            "node `{}` has no address: a {format} export writes every active node's `host:port`",
            node.id
        ))
    })
}

/// Refuses a placement without an active node, for a proxy that refuses
/// an empty server list.
fn some_active(placement: &Placement, format: ProxyFormat) -> Result<(), ExportRefusal> {
    if placement.nodes().is_empty() {
        return Err(ExportRefusal::Unexportable(format!(
            "the version has no active node, and {format} refuses a server list without servers"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
