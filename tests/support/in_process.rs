//! The launcher's second way of running a server: in this test process,
//! through `ringd::server::Server::bind` on `127.0.0.1:0` and a fresh
//! temporary SQLite file or an etcd store, served on a thread of its own
//! with its own multi-thread tokio runtime.
//!
//! ```ignore
//! let s = Ringd::sqlite().args(&["--client-ttl", "1s"]).in_process().start();
//! let clock = manual_clock();
//! let s = Ringd::on(&etcd.store_url()).prefix("/p").in_process().clock(clock.clone()).start();
//! clock.advance(time::Duration::seconds(10));
//! ```
//!
//! A test that checks a TTL gives the server a [`ManualClock`] and moves
//! it past the deadline instead of sleeping through it: the service and
//! the store read the time from it alone. What etcd keeps in real time
//! (its own lease TTLs) it does not move.
//!
//! Its own runtime, because the test's may be a current-thread one (or
//! none, for a sync test) that blocks while it drops the server; the
//! server must keep serving and shut down regardless. Nothing is parsed
//! from stdout and no binary is needed, so it starts in milliseconds.
//!
//! What only a process has (signals, kill -9, a restart on the same port,
//! the log on stderr, environment variables) is not on [`InProcessServer`],
//! so a test that needs it does not compile against it. The server's
//! tracing goes nowhere: a test that reads log lines runs the process.

use std::ffi::OsString;
use std::ops::Deref;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use ringd::api::Settings;
use ringd::ring::durations::{DurationBounds, CLIENT_TTL, WATCH_KEEPALIVE};
use ringd::ring::{Clock, ManualClock};
use ringd::server::{Secret, ServeConfig, Server};
use tempfile::TempDir;
use tokio::sync::oneshot;

use super::api::TestApi;
use super::ringd::{Ringd, Store, STARTUP};

/// How long in-flight requests get to finish once the server is told to
/// stop; then the runtime is dropped, which cancels them.
const DRAIN: Duration = Duration::from_secs(10);

impl Ringd {
    /// The same server run in this process rather than as a child: on a
    /// fresh temporary SQLite file or an `etcd://` store, with the
    /// arguments mapped onto a `ServeConfig`. Panics for what it cannot
    /// honour: a restart on a kept SQLite file, another store, an
    /// environment variable, an argument it does not map.
    pub(crate) fn in_process(self) -> InProcess {
        let store_url = match self.store {
            Store::Sqlite(None) => None,
            Store::Url(url) if url.starts_with("etcd://") => Some(url),
            _ => panic!(
                "in-process ringd runs only on a fresh temporary SQLite file \
                 (`Ringd::sqlite()`) or on etcd (`Ringd::on(etcd://…)`); \
                 restarts and other stores need the process"
            ),
        };
        assert!(
            self.env.is_empty(),
            "in-process ringd cannot honour environment variables ({:?}): \
             run the process",
            self.env
        );
        InProcess::new(&self.args, store_url)
    }
}

/// A `ringd serve` to run in this process: the configuration the
/// launcher's arguments would give the binary ([`Ringd::in_process`]).
pub(crate) struct InProcess {
    config: ServeConfig,
    dir: TempDir,
}

impl InProcess {
    /// A configuration for `store_url`, or a fresh SQLite file when none,
    /// from `serve` arguments. Panics on an argument it cannot honour, so
    /// that no test silently runs with another configuration than the one
    /// it asked for.
    pub(super) fn new(args: &[OsString], store_url: Option<String>) -> Self {
        let dir = TempDir::new().expect("temp dir");
        let store_url = store_url
            .unwrap_or_else(|| format!("sqlite://{}", dir.path().join("ringd.db").display()));
        let mut config = ServeConfig {
            listen: "127.0.0.1:0".into(),
            store_url,
            ..ServeConfig::default()
        };
        let mut settings = Settings::default();
        let mut args = args.iter().map(|a| {
            a.to_str()
                .unwrap_or_else(|| panic!("in-process ringd: {a:?} is not UTF-8"))
        });
        while let Some(arg) = args.next() {
            // `--flag=value` or `--flag value`, as clap takes them.
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag, Some(value)),
                None => (arg, None),
            };
            let mut value = || {
                inline
                    .or_else(|| args.next())
                    .unwrap_or_else(|| panic!("in-process ringd: {flag} needs a value"))
                    .to_owned()
            };
            match flag {
                "--admin-token" => config.admin_token = Some(Secret::from(value())),
                "--read-token" => config.read_token = Some(Secret::from(value())),
                "--etcd-prefix" => config.etcd_prefix = value(),
                "--client-ttl" => settings.client_ttl = bounded(&CLIENT_TTL, flag, &value()),
                "--watch-keepalive" => {
                    settings.keepalive = bounded(&WATCH_KEEPALIVE, flag, &value());
                }
                "--retention" => {
                    let text = value();
                    config.retention = text
                        .parse()
                        .ok()
                        .filter(|&n| n >= 1)
                        .unwrap_or_else(|| panic!("in-process ringd: bad {flag} {text:?}"));
                }
                _ => panic!(
                    "in-process ringd cannot honour `{arg}`: it maps only --admin-token, \
                     --read-token, --etcd-prefix, --client-ttl, --watch-keepalive and \
                     --retention; run this test on the process (drop `.in_process()`)"
                ),
            }
        }
        config.settings = settings;
        Self { config, dir }
    }

    /// The server reads the time from `clock` (a [`ManualClock`] the test
    /// moves) instead of the system's.
    pub(crate) fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.config.clock = clock;
        self
    }

    /// Binds the server, serves it on its own thread and returns once it
    /// accepts connections (at most 30 s).
    pub(crate) fn start(self) -> InProcessServer {
        let Self { config, dir } = self;
        let (bound, url) = mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("ringd-in-process".into())
            .spawn(move || serve(config, bound, stopped))
            .expect("spawn the server thread");
        let url = match url.recv_timeout(STARTUP) {
            Ok(Ok(url)) => url,
            Ok(Err(e)) => panic!("in-process ringd did not start: {e}"),
            Err(e) => panic!("in-process ringd did not bind within {STARTUP:?}: {e}"),
        };
        InProcessServer {
            api: TestApi::of_server(&url),
            url,
            stop: Some(stop),
            thread: Some(thread),
            _dir: dir,
        }
    }
}

/// A clock for [`InProcess::clock`] that stands still until the test
/// moves it, showing 2025-06-15 15:06:40 UTC.
pub(crate) fn manual_clock() -> Arc<ManualClock> {
    let start = time::OffsetDateTime::from_unix_timestamp(1_750_000_000).expect("a valid time");
    Arc::new(ManualClock::new(start))
}

/// A duration flag, parsed and bounded as `ringd serve` parses it.
fn bounded(bounds: &DurationBounds, flag: &str, text: &str) -> Duration {
    bounds
        .parse(text)
        .unwrap_or_else(|e| panic!("in-process ringd: bad {flag} {text:?}: {e}"))
}

/// The server thread: bind, report the URL (or the error), serve until
/// told to stop, then give in-flight requests [`DRAIN`] to finish.
fn serve(
    config: ServeConfig,
    bound: mpsc::Sender<Result<String, String>>,
    stopped: oneshot::Receiver<()>,
) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("ringd-in-process")
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async move {
        let server = match Server::bind(config).await {
            Ok(server) => server,
            Err(e) => {
                let _ = bound.send(Err(e.to_string()));
                return;
            }
        };
        let _ = bound.send(Ok(server.url()));
        let (begin, drain) = oneshot::channel::<()>();
        let running = tokio::spawn(server.run(async move {
            let _ = drain.await;
        }));
        // A dropped sender (the handle gone in a panic) stops it too.
        let _ = stopped.await;
        let _ = begin.send(());
        if tokio::time::timeout(DRAIN, running).await.is_err() {
            eprintln!("in-process ringd: requests still in flight after {DRAIN:?}; cancelled");
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(5));
}

/// A `ringd serve` running in this process; stopped (gracefully, through
/// the shutdown future) and its thread joined when dropped.
pub(crate) struct InProcessServer {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    api: TestApi,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    // Dropped last, after the thread that uses the database has ended.
    _dir: TempDir,
}

impl InProcessServer {
    /// Typed requests to this server.
    pub(crate) fn api(&self) -> &TestApi {
        &self.api
    }
}

impl Deref for InProcessServer {
    type Target = TestApi;

    fn deref(&self) -> &TestApi {
        &self.api
    }
}

impl Drop for InProcessServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic on the server thread is a failure of the test,
            // unless the test is already failing.
            if thread.join().is_err() && !std::thread::panicking() {
                panic!("the in-process ringd thread panicked");
            }
        }
    }
}

/// A server in this process with ring `r` at version 3 (nodes a, b), and
/// that state.
pub(crate) async fn setup() -> (InProcessServer, (u64, String)) {
    let s = Ringd::sqlite().in_process().start();
    assert_eq!(s.ring_with("r", &["a", "b"]).await, 3);
    let state = s.state_of("r").await;
    (s, state)
}
