//! A `target/release/ringd serve` child for the load examples: started on a
//! free loopback port, killed when dropped. `RINGD_BIN` names another
//! binary, for example one built from an older commit to compare against.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};

/// A running server.
pub struct RingdProcess {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for RingdProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl RingdProcess {
    /// A server on a fresh SQLite store in a temporary directory.
    #[allow(dead_code)] // the etcd example starts its own store
    pub fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = format!("sqlite://{}/ringd.db", dir.path().display());
        let mut server = Self::start(&store, &[]);
        server._dir = Some(dir);
        server
    }

    /// A server on `store` with extra `serve` arguments; tokens unset so
    /// every request is allowed.
    pub fn start(store: &str, extra: &[&str]) -> Self {
        let bin = std::env::var_os("RINGD_BIN")
            .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/ringd").into());
        let mut child = Command::new(&bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--store", store])
            .args(extra)
            .env_remove("RINGD_ADMIN_TOKEN")
            .env_remove("RINGD_READ_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {} ({e}); run `cargo build --release` first",
                    bin.to_string_lossy()
                )
            });
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the listening line");
        let url = line
            .trim()
            .strip_prefix("ringd listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Self {
            child,
            url,
            _dir: None,
        }
    }

    /// The server's process id.
    #[allow(dead_code)] // not every example measures the process
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}
