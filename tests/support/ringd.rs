//! The one way tests, benchmarks and load tools start a server: the real
//! `ringd serve` as a child process on a free loopback port, on a
//! temporary SQLite file or a store URL, killed when dropped.
//!
//! ```ignore
//! let s = Ringd::sqlite().args(&["--client-ttl", "1s"]).start();
//! let s = Ringd::on(&etcd.store_url()).prefix("/p").env("RINGD_ETCD_PASSWORD", pw).start();
//! let s = Ringd::sqlite().args(&["--client-ttl", "1s"]).in_process().start();
//! ```
//!
//! The child never sees the test's own `RINGD_*` or proxy variables
//! ([`SCRUBBED_ENV`]), gets 30 s to print its URL, has its stdout drained
//! and its stderr written to `ringd.log`, which is printed when the test
//! panics. `Ringd::in_process` (in `in_process.rs`, so that the load tools,
//! which include only this file, `api.rs` and `client.rs`, need no server
//! in their own process) runs the same configuration in this process.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::api::TestApi;

/// How long a server gets to print its URL.
pub(super) const STARTUP: Duration = Duration::from_secs(30);

/// Every environment variable that would change what the `ringd` binary
/// does, as a server or as a CLI: the children get none of them (the test
/// process's own environment is left alone, since tests run in parallel
/// threads of one process). The proxy variables would send the CLI's and
/// the client's loopback requests elsewhere.
pub(crate) const SCRUBBED_ENV: &[&str] = &[
    // `ringd serve`.
    "RINGD_LISTEN",
    "RINGD_STORE",
    "RINGD_ADMIN_TOKEN",
    "RINGD_READ_TOKEN",
    "RINGD_WATCH_KEEPALIVE",
    "RINGD_CLIENT_TTL",
    "RINGD_TLS_CERT",
    "RINGD_TLS_KEY",
    "RINGD_TLS_CLIENT_CA",
    "RINGD_ETCD_PREFIX",
    "RINGD_ETCD_USER",
    "RINGD_ETCD_PASSWORD",
    "RINGD_ETCD_CA_CERT",
    "RINGD_ETCD_CERT",
    "RINGD_ETCD_KEY",
    "RINGD_ELECTION_TTL",
    "RINGD_INSTANCE_ID",
    "RINGD_ADVERTISE_URL",
    // The CLI.
    "RINGD_ADDR",
    "RINGD_TOKEN",
    "RINGD_CA_CERT",
    "RINGD_CLIENT_CERT",
    "RINGD_CLIENT_KEY",
    // Proxies.
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// The `ringd` binary: `RINGD_BIN` if set (a build from another commit, or
/// the server binary for a build that has none, such as the client-only
/// one), else the one cargo built for this test. Never a silent skip when
/// it is missing.
pub(crate) fn ringd_binary() -> PathBuf {
    let built = option_env!("CARGO_BIN_EXE_ringd").map(PathBuf::from);
    // Load tools are examples, which cargo gives no binary path: they run
    // the release build. Tests never fall back to a build of unknown age.
    #[cfg(not(test))]
    let built =
        built.or_else(|| Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/ringd")));
    let bin = match std::env::var_os("RINGD_BIN") {
        Some(bin) if !bin.is_empty() => PathBuf::from(bin),
        // `option_env!`: the client-only build has no `ringd` of its own,
        // yet cargo may still name its path (`required-features`), so the
        // file must exist.
        _ => built.filter(|p| p.is_file()).unwrap_or_else(|| {
            panic!(
                "no ringd binary: run `cargo build --release` first and set \
                 RINGD_BIN=target/release/ringd"
            )
        }),
    };
    assert!(
        bin.is_file(),
        "RINGD_BIN={} is not a file: build it with `cargo build --release`",
        bin.display()
    );
    bin
}

/// Where the server keeps its data.
pub(super) enum Store {
    /// A SQLite file `ringd.db` in this directory, or in a fresh temporary
    /// one.
    Sqlite(Option<PathBuf>),
    /// A store URL (`etcd://…`).
    Url(String),
}

/// How to start a `ringd serve`: the store, then extra arguments and
/// environment variables for the child.
pub(crate) struct Ringd {
    pub(super) store: Store,
    pub(super) args: Vec<OsString>,
    pub(super) env: Vec<(OsString, OsString)>,
}

impl Ringd {
    /// A server on a fresh temporary SQLite file, deleted with the server.
    pub(crate) fn sqlite() -> Self {
        Self::with(Store::Sqlite(None))
    }

    /// A server on the SQLite file in `dir` (which the caller keeps), for
    /// restarts on the same data; its log is appended to `dir/ringd.log`.
    pub(crate) fn sqlite_in(dir: &Path) -> Self {
        Self::with(Store::Sqlite(Some(dir.to_path_buf())))
    }

    /// A server on the store at `url` (for example `etcd://host:port`).
    pub(crate) fn on(url: &str) -> Self {
        Self::with(Store::Url(url.to_owned()))
    }

    fn with(store: Store) -> Self {
        Self {
            store,
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// `--etcd-prefix prefix`.
    pub(crate) fn prefix(self, prefix: &str) -> Self {
        self.args(&["--etcd-prefix", prefix])
    }

    /// Extra `serve` arguments; a later `--listen` wins over the default
    /// `127.0.0.1:0` (a restart on the same port).
    pub(crate) fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(OsString::from));
        self
    }

    /// An environment variable for the child only.
    pub(crate) fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Environment variables for the child only.
    pub(crate) fn envs(mut self, vars: &[(&str, &str)]) -> Self {
        for (name, value) in vars {
            self = self.env(name, value);
        }
        self
    }

    /// The command, and the directory for its log (owned if temporary).
    fn command(&self) -> (Command, PathBuf, Option<TempDir>) {
        let owned = match &self.store {
            Store::Sqlite(Some(_)) => None,
            _ => Some(TempDir::new().expect("temp dir")),
        };
        let dir = match (&self.store, &owned) {
            (Store::Sqlite(Some(dir)), _) => dir.clone(),
            (_, Some(temp)) => temp.path().to_path_buf(),
            (_, None) => unreachable!("a temporary directory was made above"),
        };
        let store = match &self.store {
            Store::Sqlite(_) => format!("sqlite://{}", dir.join("ringd.db").display()),
            Store::Url(url) => url.clone(),
        };
        let mut cmd = Command::new(ringd_binary());
        for var in SCRUBBED_ENV {
            cmd.env_remove(var);
        }
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--store", &store])
            .args(&self.args)
            .env("RUST_LOG", "info")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        (cmd, dir, owned)
    }

    /// Starts the server and waits (at most 30 s) for its URL.
    pub(crate) fn start(self) -> Server {
        let (mut cmd, dir, owned) = self.command();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("ringd.log"))
            .expect("log file");
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("spawn ringd");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep draining so the server never blocks on a full pipe.
            for _ in lines {}
        });
        let line = match rx.recv_timeout(STARTUP) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "ringd printed no URL; its log:\n{}",
                    std::fs::read_to_string(dir.join("ringd.log")).unwrap_or_default()
                );
            }
        };
        let url = line
            .strip_prefix("ringd listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_owned();
        Server {
            child,
            api: TestApi::of_server(&url),
            url,
            dir,
            _owned: owned,
        }
    }

    /// Runs the server expecting it to exit by itself within 30 s (a
    /// refused configuration); returns its output.
    pub(crate) fn run_to_exit(self) -> Output {
        let (mut cmd, _dir, _owned) = self.command();
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ringd");
        let status = wait_for_exit(&mut child, Duration::from_secs(30));
        assert!(status.is_some(), "ringd kept running with {:?}", self.args);
        child.wait_with_output().expect("output")
    }
}

/// A running `ringd serve`; killed when dropped.
pub(crate) struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// Directory holding the server's log (and the SQLite database).
    pub dir: PathBuf,
    _owned: Option<TempDir>,
    /// Requests to it: [`Server::api`].
    pub(super) api: TestApi,
}

impl Server {
    /// The server's log so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("ringd.log")).unwrap_or_default()
    }

    /// The server's process id, for sending it signals.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the server at once (SIGKILL), as a crash would.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits for the exit.
    pub(crate) fn terminate(&mut self) -> ExitStatus {
        // The shell's builtin `kill`, so no extra package is needed.
        let status = Command::new("sh")
            .args(["-c", &format!("kill -TERM {}", self.child.id())])
            .status()
            .expect("run sh");
        assert!(status.success(), "kill -TERM failed");
        wait_for_exit(&mut self.child, Duration::from_secs(30))
            .expect("ringd did not exit within 30 s of SIGTERM")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        // A failing test shows what the server said.
        if std::thread::panicking() {
            eprintln!("--- ringd log ({}) ---\n{}", self.url, self.log());
        }
    }
}

fn wait_for_exit(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}
