//! Test harness: a real `etcd` process per test, on free loopback ports
//! and a temporary data directory, stopped and deleted when dropped.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long etcd gets to start answering.
const STARTUP: Duration = Duration::from_secs(30);

/// A running single-member etcd; killed when dropped.
pub(crate) struct Etcd {
    /// The process; `None` while stopped.
    child: Option<Child>,
    /// `http://127.0.0.1:<client port>` (`https://` with TLS).
    pub endpoint: String,
    /// `127.0.0.1:<client port>`.
    pub host_port: String,
    peer_url: String,
    dir: TempDir,
    /// With TLS: the certificates etcd serves and trusts.
    pub tls: Option<TestCerts>,
}

/// A throw-away CA with a server and a client certificate it signed,
/// written as PEM files into a directory.
pub(crate) struct TestCerts {
    /// The CA certificate.
    pub ca: PathBuf,
    /// etcd's certificate, valid for 127.0.0.1 and localhost.
    pub server_cert: PathBuf,
    /// Its key.
    pub server_key: PathBuf,
    /// A client certificate for `--client-cert-auth`.
    pub client_cert: PathBuf,
    /// Its key.
    pub client_key: PathBuf,
}

impl TestCerts {
    /// Generates the CA and both certificates into `dir`.
    pub(crate) fn generate(dir: &std::path::Path) -> Self {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
        };
        let ca_key = KeyPair::generate().expect("CA key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "ringd test CA");
        let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
        let leaf = |name: &str| {
            let key = KeyPair::generate().expect("key");
            let mut params =
                CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                    .expect("params");
            params.distinguished_name.push(DnType::CommonName, name);
            params.extended_key_usages = vec![
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ];
            let cert = params.signed_by(&key, &ca, &ca_key).expect("sign");
            (cert.pem(), key.serialize_pem())
        };
        let write = |name: &str, pem: &str| {
            let path = dir.join(name);
            std::fs::write(&path, pem).expect("write PEM");
            path
        };
        let (server_pem, server_key) = leaf("etcd");
        let (client_pem, client_key) = leaf("ringd");
        TestCerts {
            ca: write("ca.pem", &ca.pem()),
            server_cert: write("server.pem", &server_pem),
            server_key: write("server.key", &server_key),
            client_cert: write("client.pem", &client_pem),
            client_key: write("client.key", &client_key),
        }
    }

    /// Client options presenting the client certificate.
    pub(crate) fn connect_options(&self) -> etcd_client::ConnectOptions {
        let read = |p: &PathBuf| std::fs::read(p).expect("read PEM");
        let tls = etcd_client::TlsOptions::new()
            .ca_certificate(etcd_client::Certificate::from_pem(read(&self.ca)))
            .identity(etcd_client::Identity::from_pem(
                read(&self.client_cert),
                read(&self.client_key),
            ));
        etcd_client::ConnectOptions::new().with_tls(tls)
    }
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
pub(crate) fn etcd_binary() -> PathBuf {
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
    pub(crate) async fn start() -> Self {
        Self::start_with(false).await
    }

    /// Starts etcd serving clients over TLS only, requiring a client
    /// certificate signed by its CA ([`Etcd::tls`]).
    pub(crate) async fn start_tls() -> Self {
        Self::start_with(true).await
    }

    async fn start_with(tls: bool) -> Self {
        let dir = TempDir::new().expect("temp dir");
        let (client, peer) = (free_port(), free_port());
        let scheme = if tls { "https" } else { "http" };
        let certs = tls.then(|| TestCerts::generate(dir.path()));
        let mut etcd = Etcd {
            child: None,
            endpoint: format!("{scheme}://127.0.0.1:{client}"),
            host_port: format!("127.0.0.1:{client}"),
            peer_url: format!("http://127.0.0.1:{peer}"),
            dir,
            tls: certs,
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
        let mut command = Command::new(etcd_binary());
        if let Some(certs) = &self.tls {
            command
                .arg(format!("--cert-file={}", certs.server_cert.display()))
                .arg(format!("--key-file={}", certs.server_key.display()))
                .arg(format!("--trusted-ca-file={}", certs.ca.display()))
                .arg("--client-cert-auth");
        }
        let child = command
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

    /// `etcd://127.0.0.1:<client port>`, in the form `ringd serve --store`
    /// takes.
    pub(crate) fn store_url(&self) -> String {
        format!("etcd://{}", self.host_port)
    }

    /// Kills etcd, keeping its data directory and ports for [`Etcd::restart`].
    pub(crate) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops etcd in its tracks (SIGSTOP): its connections stay open and
    /// nothing answers on them, as across a network partition.
    pub(crate) fn freeze(&self) {
        let child = self.child.as_ref().expect("etcd is running");
        signal(child.id(), "STOP");
    }

    /// Lets a frozen etcd go on (SIGCONT).
    pub(crate) fn thaw(&self) {
        let child = self.child.as_ref().expect("etcd is running");
        signal(child.id(), "CONT");
    }

    /// Starts etcd again on the same data and ports after [`Etcd::stop`],
    /// and waits until it serves requests.
    pub(crate) async fn restart(&mut self) {
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
            if let Ok(mut c) = self.try_client().await {
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
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default()
    }

    /// A client (with the client certificate under TLS), for tests that
    /// write keys directly.
    pub(crate) async fn client(&self) -> etcd_client::Client {
        self.try_client().await.expect("connect to test etcd")
    }

    async fn try_client(&self) -> Result<etcd_client::Client, etcd_client::Error> {
        let options = self.tls.as_ref().map(TestCerts::connect_options);
        etcd_client::Client::connect([&self.endpoint], options).await
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Sends `name` (a `kill` signal name) to the process `pid`.
pub(crate) fn signal(pid: u32, name: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid}: {status}");
}
