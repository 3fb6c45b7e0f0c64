//! The client library as applications build it, without the server
//! (`cargo test --release --no-default-features --features client --test
//! client_only`), against a real `ringd` process on a temporary SQLite
//! database. That build has no `ringd` binary of its own: the server is
//! the one cargo built for this test (the default build) or the one
//! `RINGD_BIN` names (built beforehand with `cargo build --release`).


mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use support::client::{client, Api, Events, GUARD};
use ringd::client::{Transport, WatchMode};
use tempfile::TempDir;

/// A `ringd serve` on a temporary SQLite file; killed when dropped.
struct Ringd {
    child: Child,
    url: String,
    _dir: TempDir,
}

/// The server binary: `RINGD_BIN` if set, else the one cargo built for
/// this test. The client-only build does not build it, yet cargo may still
/// name its path there (`required-features`), so the file must exist.
/// Never a silent skip when it is missing.
fn ringd_binary() -> String {
    let bin = match std::env::var("RINGD_BIN") {
        Ok(bin) if !bin.is_empty() => bin,
        _ => option_env!("CARGO_BIN_EXE_ringd")
            .filter(|p| std::path::Path::new(p).is_file())
            .unwrap_or_else(|| {
                panic!(
                    "no ringd binary: the client-only build does not build it. Run \
                     `cargo build --release` first and set RINGD_BIN=target/release/ringd"
                )
            })
            .to_owned(),
    };
    assert!(
        std::path::Path::new(&bin).is_file(),
        "RINGD_BIN={bin} is not a file: build it with `cargo build --release`"
    );
    bin
}

impl Ringd {
    fn start() -> Self {
        let dir = TempDir::new().expect("temp dir");
        let bin = ringd_binary();
        let store = format!("sqlite://{}", dir.path().join("ringd.db").display());
        let mut child = Command::new(&bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--store", &store])
            .env_remove("RINGD_LISTEN")
            .env_remove("RINGD_STORE")
            .env_remove("RINGD_ADMIN_TOKEN")
            .env_remove("RINGD_READ_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {bin}: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            for _ in lines {}
        });
        let line = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!("{bin} printed no URL within 30 s");
            }
        };
        let url = line
            .strip_prefix("ringd listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Self {
            child,
            url,
            _dir: dir,
        }
    }
}

impl Drop for Ringd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_only_build_follows_a_live_ring() {
    let s = Ringd::start();
    let api = Api::new(&s.url, "web");
    assert_eq!(api.create().await, 1);
    assert_eq!(api.add_each(&["a", "b", "c"]).await, 4);
    let c = client(&[&s.url], "web", WatchMode::Auto, "client-only");
    let view = c.ready(GUARD).await.expect("ready");
    assert_eq!(view.version(), 4);
    let mut ev = Events::after_ready(&c, 4);
    api.assert_routes_like_server(&c, 4).await;

    assert_eq!(api.upsert("d", 2).await, 5);
    assert_eq!(api.remove("a").await, 6);
    ev.run(&api, 4, 6).await;
    api.assert_routes_like_server(&c, 6).await;
    c.wait_for_ack(6, GUARD).await.expect("ack of v6");
    api.assert_acked("client-only", 6).await;
    let st = c.status();
    assert_eq!(st.transport, Transport::Sse);
    assert_eq!(st.server.as_deref(), Some(s.url.as_str()));
    assert_eq!(
        (st.version, st.acked, st.deleted),
        (Some(6), Some(6), false)
    );
    assert_eq!(st.last_error, None);
    ev.none_within(Duration::from_millis(300)).await;
}
