//! Test harness: a real three-member etcd cluster on loopback, one process
//! per member with its own free ports, temporary data directory and log
//! file. Members can be killed one at a time; all are killed when dropped.

pub(crate) mod faults;
pub(crate) mod traffic;

use super::etcd::etcd_binary;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use etcd_client::{Client, ConnectOptions};
use tempfile::TempDir;

/// Members in the cluster: the smallest that survives losing one.
pub(crate) const MEMBERS: usize = 3;

/// How long the cluster gets to elect a leader and answer writes.
const STARTUP: Duration = Duration::from_secs(30);

/// One etcd process of the cluster.
struct Member {
    name: String,
    /// `http://127.0.0.1:<client port>`.
    endpoint: String,
    peer_url: String,
    /// The process; `None` once killed.
    child: Option<Child>,
    dir: TempDir,
}

impl Member {
    /// `etcd` for this member on its data directory, logging to its log
    /// file; `extra` flags come before the logging ones.
    fn spawn(&self, extra: &[String]) -> Child {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("etcd log");
        Command::new(etcd_binary())
            .arg(format!("--name={}", self.name))
            .arg(format!(
                "--data-dir={}",
                self.dir.path().join("data").display()
            ))
            .arg(format!("--listen-client-urls={}", self.endpoint))
            .arg(format!("--advertise-client-urls={}", self.endpoint))
            .arg(format!("--listen-peer-urls={}", self.peer_url))
            .arg(format!("--initial-advertise-peer-urls={}", self.peer_url))
            .args(extra)
            .arg("--logger=zap")
            .arg("--log-level=warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("etcd log"))
            .stderr(log)
            .spawn()
            .expect("spawn etcd")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("etcd.log")
    }
}

/// A running three-member etcd cluster; every member is killed when dropped.
pub(crate) struct EtcdCluster {
    members: Vec<Member>,
}

/// `count` distinct loopback ports nobody listens on right now. All
/// listeners are held until every port is picked, so no port is handed out
/// twice; another process could still take one before etcd binds it, which
/// shows up as a clear start-up failure, not a wrong result.
fn free_ports(count: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free loopback port"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("local address").port())
        .collect()
}

/// A client that talks to exactly one member, failing fast if it is gone.
async fn member_client(endpoint: &str) -> Result<Client, etcd_client::Error> {
    let options = ConnectOptions::new()
        .with_connect_timeout(Duration::from_secs(1))
        .with_timeout(Duration::from_secs(2));
    Client::connect([endpoint], Some(options)).await
}

impl EtcdCluster {
    /// Starts three members and waits until every one of them agrees on a
    /// leader and the cluster accepts a write.
    pub(crate) async fn start() -> Self {
        let ports = free_ports(2 * MEMBERS);
        let mut members: Vec<Member> = (0..MEMBERS)
            .map(|i| Member {
                name: format!("m{i}"),
                endpoint: format!("http://127.0.0.1:{}", ports[2 * i]),
                peer_url: format!("http://127.0.0.1:{}", ports[2 * i + 1]),
                child: None,
                dir: TempDir::new().expect("temp dir"),
            })
            .collect();
        // Unique per cluster (the ports are), so a member can only ever join
        // its own cluster, never one another test started on reused ports.
        let token = format!("ringd-test-{}", ports[0]);
        let initial_cluster = members
            .iter()
            .map(|m| format!("{}={}", m.name, m.peer_url))
            .collect::<Vec<_>>()
            .join(",");
        // All members must run before any can answer: a lone member has no
        // quorum, so they are spawned first and waited for together.
        for m in &mut members {
            let child = m.spawn(&[
                format!("--initial-cluster={initial_cluster}"),
                "--initial-cluster-state=new".to_owned(),
                format!("--initial-cluster-token={token}"),
            ]);
            m.child = Some(child);
        }
        let mut cluster = EtcdCluster { members };
        cluster.wait_ready().await;
        cluster
    }

    /// Polls until every member names the same leader and a write through
    /// all endpoints succeeds; panics with the logs if that never happens.
    async fn wait_ready(&mut self) {
        let deadline = Instant::now() + STARTUP;
        loop {
            for i in 0..self.members.len() {
                let child = self.members[i].child.as_mut().expect("member is running");
                if let Ok(Some(status)) = child.try_wait() {
                    let name = &self.members[i].name;
                    panic!("etcd {name} exited with {status}:\n{}", self.logs());
                }
            }
            if self.agreed_leader().await.is_some() {
                if let Ok(mut c) = Client::connect(self.endpoints(), None).await {
                    if c.put("/ready", "1", None).await.is_ok() {
                        return;
                    }
                }
            }
            assert!(
                Instant::now() < deadline,
                "the etcd cluster did not answer within {STARTUP:?}:\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The leader's index if every running member answers its status and
    /// all of them name the same leader, which is one of them.
    async fn agreed_leader(&self) -> Option<usize> {
        let mut leader = None;
        let mut ids = Vec::new();
        for (i, m) in self.members.iter().enumerate() {
            if m.child.is_none() {
                continue;
            }
            let mut c = member_client(&m.endpoint).await.ok()?;
            let s = c.status().await.ok()?;
            let own = s.header()?.member_id();
            if s.leader() == 0 || leader.is_some_and(|l| l != s.leader()) {
                return None;
            }
            leader = Some(s.leader());
            ids.push((i, own));
        }
        let leader = leader?;
        ids.into_iter()
            .find(|&(_, id)| id == leader)
            .map(|(i, _)| i)
    }

    /// The index of the current leader, once every running member agrees
    /// on it; panics if they do not within 10 s.
    pub(crate) async fn leader(&self) -> usize {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(i) = self.agreed_leader().await {
                return i;
            }
            assert!(
                Instant::now() < deadline,
                "the members did not agree on a leader:\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Kills member `i` with SIGKILL (no graceful leader hand-off) and
    /// waits for the process to be gone.
    pub(crate) fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Every member's client URL, `http://127.0.0.1:<port>`, in member order.
    pub(crate) fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(|m| m.endpoint.clone()).collect()
    }

    /// `etcd://127.0.0.1:A,127.0.0.1:B,127.0.0.1:C`: every member, in the
    /// form `ringd serve --store` takes.
    pub(crate) fn store_url(&self) -> String {
        let members: Vec<&str> = self
            .members
            .iter()
            .map(|m| m.endpoint.trim_start_matches("http://"))
            .collect();
        format!("etcd://{}", members.join(","))
    }

    /// Member `i`'s output so far.
    pub(crate) fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.members[i].log_path()).unwrap_or_default()
    }

    /// Every member's output so far, each under its name.
    pub(crate) fn logs(&self) -> String {
        (0..self.members.len())
            .map(|i| format!("--- etcd {} ---\n{}", self.members[i].name, self.log(i)))
            .collect()
    }

    /// A client over every member's endpoint, for tests that read keys
    /// directly.
    pub(crate) async fn client(&self) -> Client {
        Client::connect(self.endpoints(), None)
            .await
            .expect("connect to the test etcd cluster")
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
        }
    }
}
