//! Test harness: a real `etcd` process per test, on free loopback ports
//! and a temporary data directory, stopped and deleted when dropped.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long etcd gets to start answering.
const STARTUP: Duration = Duration::from_secs(30);

/// A running single-member etcd; killed when dropped.
pub struct Etcd {
    /// The process; `None` while stopped.
    child: Option<Child>,
    /// `http://127.0.0.1:<client port>`.
    pub endpoint: String,
    peer_url: String,
    dir: TempDir,
}

/// A loopback port nobody listens on right now. Another process could take
/// it before etcd binds it; the ports are fresh per test, so that is rare
/// and shows up as a clear start-up failure, not a wrong result.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The etcd binary, or a failure telling how to get it. Never a skip: a
/// missing etcd must not turn the etcd tests green.
fn etcd_binary() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("etcd"))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| {
        panic!("`etcd` is not on PATH; run ./.ci/test, which installs etcd-server")
    })
}

impl Etcd {
    /// Starts etcd and waits until it serves requests.
    pub async fn start() -> Self {
        let dir = TempDir::new().expect("temp dir");
        let (client, peer) = (free_port(), free_port());
        let mut etcd = Etcd {
            child: None,
            endpoint: format!("http://127.0.0.1:{client}"),
            peer_url: format!("http://127.0.0.1:{peer}"),
            dir,
        };
        etcd.spawn();
        etcd.wait_ready().await;
        etcd
    }

    /// Starts the process on this instance's ports and data directory.
    fn spawn(&mut self) {
        let (endpoint, peer_url) = (&self.endpoint, &self.peer_url);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("etcd.log"))
            .expect("etcd log");
        let child = Command::new(etcd_binary())
            .arg("--name=test")
            .arg(format!(
                "--data-dir={}",
                self.dir.path().join("data").display()
            ))
            .arg(format!("--listen-client-urls={endpoint}"))
            .arg(format!("--advertise-client-urls={endpoint}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster=test={peer_url}"))
            .arg("--logger=zap")
            .arg("--log-level=warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("etcd log"))
            .stderr(log)
            .spawn()
            .expect("spawn etcd");
        self.child = Some(child);
    }

    /// Kills etcd, keeping its data directory and ports for [`Etcd::restart`].
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts etcd again on the same data and ports after [`Etcd::stop`],
    /// and waits until it serves requests.
    pub async fn restart(&mut self) {
        self.stop();
        self.spawn();
        self.wait_ready().await;
    }

    /// Polls until a read succeeds; panics with etcd's log if it never does.
    async fn wait_ready(&mut self) {
        let deadline = Instant::now() + STARTUP;
        loop {
            let child = self.child.as_mut().expect("etcd is running");
            if let Ok(Some(status)) = child.try_wait() {
                panic!("etcd exited with {status}:\n{}", self.log());
            }
            if let Ok(mut c) = etcd_client::Client::connect([&self.endpoint], None).await {
                if c.get("/", None).await.is_ok() {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "etcd did not answer within {STARTUP:?}:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// etcd's output so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default()
    }

    /// A plain client, for tests that write keys directly.
    pub async fn client(&self) -> etcd_client::Client {
        etcd_client::Client::connect([&self.endpoint], None)
            .await
            .expect("connect to test etcd")
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.stop();
    }
}
