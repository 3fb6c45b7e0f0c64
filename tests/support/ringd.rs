//! Black-box test harness: runs the real `ringd` binary on port 0 with a
//! temporary SQLite file and talks to it over HTTP.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use reqwest::{Client, Method, RequestBuilder, Response, StatusCode};
use serde_json::Value;
use tempfile::TempDir;

/// How long a server gets to print its URL.
const STARTUP: Duration = Duration::from_secs(30);

/// A running `ringd serve`; killed when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// Directory holding the database and the server's log.
    pub dir: PathBuf,
    _owned: Option<TempDir>,
    pub client: Client,
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ringd"));
    let store = format!("sqlite://{}", dir.join("ringd.db").display());
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--store", &store])
        .args(args)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null());
    for var in [
        "RINGD_LISTEN",
        "RINGD_STORE",
        "RINGD_ADMIN_TOKEN",
        "RINGD_READ_TOKEN",
        "RINGD_WATCH_KEEPALIVE",
        "RINGD_CLIENT_TTL",
        "RINGD_TLS_CERT",
        "RINGD_TLS_KEY",
        "RINGD_TLS_CLIENT_CA",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

impl Server {
    /// A server on a fresh temporary directory.
    pub fn start(args: &[&str]) -> Self {
        let dir = TempDir::new().expect("temp dir");
        let mut s = Self::start_in(dir.path(), args);
        s._owned = Some(dir);
        s
    }

    /// A server on the database in `dir` (which the caller keeps).
    pub fn start_in(dir: &Path, args: &[&str]) -> Self {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("ringd.log"))
            .expect("log file");
        let mut child = command(dir, args)
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
        Self {
            child,
            url,
            dir: dir.to_path_buf(),
            _owned: None,
            client: Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("client"),
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("ringd.log")).unwrap_or_default()
    }

    /// The server's process id, for sending it signals.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server at once (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn terminate(&mut self) -> ExitStatus {
        // The shell's builtin `kill`, so no extra package is needed.
        let status = Command::new("sh")
            .args(["-c", &format!("kill -TERM {}", self.child.id())])
            .status()
            .expect("run sh");
        assert!(status.success(), "kill -TERM failed");
        wait_for_exit(&mut self.child, Duration::from_secs(30))
            .expect("ringd did not exit within 30 s of SIGTERM")
    }

    /// A request to `path` (which starts with `/`).
    pub fn req(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, format!("{}{path}", self.url))
    }

    /// GET `path`.
    pub async fn get(&self, path: &str) -> Response {
        self.req(Method::GET, path).send().await.expect("GET")
    }

    /// `method` `path` with a JSON body.
    pub async fn send_json(&self, method: Method, path: &str, body: &Value) -> Response {
        self.req(method, path)
            .json(body)
            .send()
            .await
            .expect("request")
    }

    /// PUT `path` with a JSON body.
    pub async fn put(&self, path: &str, body: Value) -> Response {
        self.send_json(Method::PUT, path, &body).await
    }

    /// POST `path` with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> Response {
        self.send_json(Method::POST, path, &body).await
    }

    /// DELETE `path`.
    pub async fn delete(&self, path: &str) -> Response {
        self.req(Method::DELETE, path).send().await.expect("DELETE")
    }

    /// GET `path`, asserting 200, as JSON.
    pub async fn get_ok(&self, path: &str) -> Value {
        expect_json(self.get(path).await, StatusCode::OK).await
    }

    /// Creates ring `ring` (default config) and registers `nodes`.
    pub async fn ring_with(&self, ring: &str, nodes: &[&str]) -> u64 {
        let r = self
            .put(&format!("/v1/rings/{ring}"), serde_json::json!({}))
            .await;
        expect_json(r, StatusCode::CREATED).await;
        let mut version = 1;
        for n in nodes {
            let r = self
                .put(
                    &format!("/v1/rings/{ring}/nodes/{n}"),
                    serde_json::json!({}),
                )
                .await;
            version = expect_json(r, StatusCode::CREATED).await["version"]
                .as_u64()
                .unwrap();
        }
        version
    }

    /// The value of an unlabelled metric from `/metrics`.
    pub async fn metric(&self, name: &str) -> u64 {
        let text = self.get("/metrics").await.text().await.expect("metrics");
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .parse()
            .expect("a whole number")
    }

    /// The ring's current version and fingerprint.
    pub async fn state_of(&self, ring: &str) -> (u64, String) {
        let v = self.get_ok(&format!("/v1/rings/{ring}")).await;
        (
            v["version"].as_u64().unwrap(),
            v["fingerprint"].as_str().unwrap().to_owned(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
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

/// Runs `ringd serve` with `args` (on a temporary store) expecting it to
/// exit by itself within 30 s; returns its output.
pub fn run_to_exit(args: &[&str]) -> Output {
    let dir = TempDir::new().expect("temp dir");
    let mut child = command(dir.path(), args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ringd");
    let status = wait_for_exit(&mut child, Duration::from_secs(30));
    assert!(status.is_some(), "ringd kept running with {args:?}");
    child.wait_with_output().expect("output")
}

/// Asserts the status and returns the body as JSON.
pub async fn expect_json(r: Response, status: StatusCode) -> Value {
    let got = r.status();
    let text = r.text().await.expect("body");
    assert_eq!(got, status, "unexpected status; body: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Asserts an RFC 9457 problem: status, content type, `type` slug, the
/// blamed field (if any), and words the detail must contain.
pub async fn expect_problem(
    r: Response,
    status: StatusCode,
    slug: &str,
    field: Option<&str>,
    detail_has: &str,
) -> Value {
    let content_type = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = expect_json(r, status).await;
    assert_eq!(
        content_type.as_deref(),
        Some("application/problem+json"),
        "{body}"
    );
    assert_eq!(body["type"], format!("urn:ringd:problem:{slug}"), "{body}");
    assert_eq!(body["status"], status.as_u16(), "{body}");
    assert!(
        body["title"].as_str().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    let detail = body["detail"].as_str().expect("detail");
    assert!(
        detail.contains(detail_has),
        "detail {detail:?} lacks {detail_has:?}"
    );
    assert_eq!(body["field"].as_str(), field, "{body}");
    body
}

/// A server with ring `r` at version 3 (nodes a, b), and that state.
pub async fn setup() -> (Server, (u64, String)) {
    let s = Server::start(&[]);
    assert_eq!(s.ring_with("r", &["a", "b"]).await, 3);
    let state = s.state_of("r").await;
    (s, state)
}

/// The names of every ring.
pub async fn rings(s: &Server) -> Vec<String> {
    s.get_ok("/v1/rings").await["rings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ring"].as_str().unwrap().to_owned())
        .collect()
}
