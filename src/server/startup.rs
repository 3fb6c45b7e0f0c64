//! Starting the service in two steps: [`Server::bind`] resolves the listen
//! address, opens the store and binds, so the caller learns the real
//! address before any request is served; [`Server::run`] serves until a
//! shutdown future completes.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpSocket};

use super::config::check_settings;
use super::store_url::{open_store, parse_store_url};
use super::tls::{self, Tls};
use super::xds_listener::{self, XdsListener};
use super::{connection, descriptors, Secret, ServeConfig, ServeError};
use crate::api::admission::Admission;
use crate::api::auth::AuthConfig;
use crate::api::DEFAULT_MAX_WATCHERS;
use crate::api::{router, AppState};
use crate::service::{Background, RingService};
use crate::store::leadership::{Instance, InstanceId};
use crate::xds::XdsSettings;

/// A bound service, not yet serving: its listener is open, so connections
/// made now wait in the backlog until [`Server::run`] accepts them.
pub struct Server {
    listener: TcpListener,
    local_addr: SocketAddr,
    state: AppState,
    tls: Option<Arc<Tls>>,
    store_url: String,
    retention: u64,
    background: Background,
    xds: Option<XdsListener>,
}

impl Server {
    /// Checks `config`, resolves its listen address (applying the loopback
    /// rule), loads the TLS files, opens the store and binds the listener.
    /// Port 0 picks a free port; [`Server::local_addr`] says which.
    pub async fn bind(config: ServeConfig) -> Result<Server, ServeError> {
        tracing::debug!(?config, "starting");
        // Refuse a bad store URL before resolving or touching anything.
        parse_store_url(&config.store_url)?;
        check_settings(&config)?;
        config.etcd_access.validate()?;
        let addrs = resolve(&config, &config.listen).await?;
        let xds_addrs = match &config.xds {
            Some(x) => Some(resolve(&config, &x.listen).await?),
            None => None,
        };
        // Before the store is opened or the port bound: a bad file stops here.
        let tls = config.tls.clone().map(Tls::new).transpose()?.map(Arc::new);
        // The tasks the server runs beside its listener: the SIGHUP
        // reloader and the service's loops. Stopped when the server stops;
        // dropped, it aborts them, so a server dropped without running
        // leaves nothing behind.
        let mut background = Background::new();
        // SIGHUP's handler is in place before the server says it listens.
        // Called here, not in the task: the call installs the handler.
        let reload = tls::reload_on_hangup(tls.clone());
        background.spawn("tls reload", |stop| async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = reload => {}
            }
        });
        let store = open_store(&config).await?;
        let listener = bind(&addrs).map_err(|source| ServeError::Bind {
            addr: config.listen.clone(),
            source,
        })?;
        let local_addr = listener.local_addr()?;
        let xds = match (&config.xds, xds_addrs) {
            (Some(x), Some(addrs)) => Some(XdsListener {
                listener: bind(&addrs).map_err(|source| ServeError::Bind {
                    addr: x.listen.clone(),
                    source,
                })?,
                settings: XdsSettings {
                    hash_header: x.hash_header.clone(),
                    ack_ttl: config.settings.client_ttl,
                },
            }),
            _ => None,
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        // Campaigns only once the URL it advertises is known, port included.
        let me = Instance {
            id: config
                .instance_id
                .clone()
                .unwrap_or_else(InstanceId::random),
            url: config
                .advertise_url
                .clone()
                .unwrap_or_else(|| format!("{scheme}://{local_addr}")),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            started_at: config.clock.now(),
        };
        tracing::info!(instance = %me.id, url = %me.url, "joining the cluster");
        let leadership = store.elect(me, config.election_ttl);
        let service = RingService::with_leadership(store, config.clock.clone(), leadership);
        service.start(&mut background);
        let auth = AuthConfig::new(
            config.admin_token.as_ref().map(Secret::expose),
            config.read_token.as_ref().map(Secret::expose),
        );
        let state = AppState::new(service, auth).with_settings(config.settings.clone());
        let open_files = descriptors::raise_open_file_limit();
        let cap = descriptors::watcher_cap(config.max_watchers, DEFAULT_MAX_WATCHERS, open_files);
        tracing::info!(max_watchers = cap, "watchers admitted at most");
        let state = state.with_admission(Admission::new(cap));
        Ok(Server {
            listener,
            local_addr,
            state,
            tls,
            store_url: config.store_url,
            retention: config.retention,
            background,
            xds,
        })
    }

    /// The address the listener is bound to, with the real port when the
    /// configured one was 0.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The address the xDS listener is bound to, if `--xds-listen` is set.
    pub fn xds_addr(&self) -> Option<SocketAddr> {
        self.xds
            .as_ref()
            .and_then(|x| xds_listener::local_addr(x).ok())
    }

    /// The base URL to reach the server at: `http://<address>`, or
    /// `https://` with TLS.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.local_addr)
    }

    /// Serves until `shutdown` completes, then marks the server not ready,
    /// ends the watch streams, stops accepting connections and lets
    /// in-flight requests finish before it returns.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) {
        let Server {
            listener,
            local_addr,
            state,
            tls,
            store_url,
            retention,
            background,
            xds,
        } = self;
        tracing::info!(addr = %local_addr, store = %store_url, retention, tls = tls.is_some(), "serving");
        let ready = state.ready.clone();
        let hub = state.service.hub().clone();
        let service = state.service.clone();
        let stop_xds = tokio_util::sync::CancellationToken::new();
        let xds = xds.map(|bound| {
            let (service, auth) = (state.service.clone(), state.auth.clone());
            tokio::spawn(xds_listener::serve(
                bound,
                service,
                auth,
                tls.clone(),
                stop_xds.clone(),
            ))
        });
        let app = router(state);
        connection::serve(listener, app, tls, async move {
            shutdown.await;
            stop_xds.cancel();
            ready.store(false, Ordering::Relaxed);
            // First, so another instance takes over while this one drains.
            service.resign().await;
            // Watch streams never end on their own; end them so the
            // graceful shutdown, which awaits them, can finish.
            hub.close();
            tracing::info!("shutting down: finishing in-flight requests");
        })
        .await;
        if let Some(xds) = xds {
            let _ = xds.await;
        }
        background.stop().await;
        tracing::info!("stopped");
    }
}

/// Resolves `listen` (`--listen` or `--xds-listen`) and applies the
/// loopback rule.
async fn resolve(config: &ServeConfig, listen: &str) -> Result<Vec<SocketAddr>, ServeError> {
    let invalid = |reason: String| ServeError::InvalidListen {
        addr: listen.to_owned(),
        reason,
    };
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(listen)
        .await
        .map_err(|e| invalid(format!("{e}; expected host:port, e.g. 127.0.0.1:7420")))?
        .collect();
    if addrs.is_empty() {
        return Err(invalid("it resolves to no address".into()));
    }
    let has_admin = config
        .admin_token
        .as_ref()
        .is_some_and(|t| !t.expose().is_empty());
    if let Some(open) = addrs.iter().find(|a| !a.ip().is_loopback()) {
        if !has_admin && !config.insecure {
            return Err(ServeError::Insecure {
                addr: open.to_string(),
            });
        }
        if !has_admin {
            tracing::warn!(addr = %open, "--insecure: serving a non-loopback address without an admin token; anyone who can reach it can change rings");
        } else if config.tls.is_none() {
            tracing::warn!(addr = %open, "serving a non-loopback address without TLS: the admin token and every request travel in clear text; set --tls-cert and --tls-key");
        }
    }
    Ok(addrs)
}

/// Connections the kernel may hold for the accept loop. When a fleet
/// reconnects at once, a short queue (tokio's default is 1,024) overflows
/// and the clients whose handshakes were dropped retry only after a
/// second or more; the kernel lowers this to `net.core.somaxconn`.
const LISTEN_BACKLOG: u32 = 65_535;

fn bind(addrs: &[SocketAddr]) -> io::Result<TcpListener> {
    let mut last = None;
    for addr in addrs {
        match listen(*addr) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no address to bind")))
}

fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    // As std's and tokio's own bind do, so a restart can bind at once.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}
