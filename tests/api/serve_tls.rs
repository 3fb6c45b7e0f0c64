//! TLS on ringd's own listener: HTTPS for the Rust client and the CLI,
//! mutual TLS, reloading the certificate on SIGHUP, and the clear-text
//! warning. Every certificate is made here, by a CA made here.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::ringd::{Ringd, Server};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use ringd::client::{RingClient, TlsSettings};
use serde_json::{json, Value};
use tempfile::TempDir;

/// A certificate authority.
struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl Ca {
    fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Self { cert, key }
    }

    fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A certificate and its key, as PEM, for `names` and `usage`.
    fn issue(&self, names: &[&str], usage: ExtendedKeyUsagePurpose) -> (String, String) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "ringd test");
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    fn server_cert(&self) -> (String, String) {
        self.issue(
            &["127.0.0.1", "localhost"],
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    fn client_cert(&self) -> (String, String) {
        self.issue(&["web-1"], ExtendedKeyUsagePurpose::ClientAuth)
    }
}

/// Files in a temporary directory.
struct Files(TempDir);

impl Files {
    fn new() -> Self {
        Self(TempDir::new().unwrap())
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path: PathBuf = self.0.path().join(name);
        // Written whole, then renamed, as a deployment would.
        let tmp = self.0.path().join(format!(".{name}.tmp"));
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        path.to_str().unwrap().to_owned()
    }

    fn path(&self, name: &str) -> String {
        self.0.path().join(name).to_str().unwrap().to_owned()
    }
}

/// An HTTP client that trusts only `ca`, presenting `identity` if given.
fn trusting(ca: &str, identity: Option<&(String, String)>) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap())
        .timeout(Duration::from_secs(10));
    if let Some((cert, key)) = identity {
        b = b.identity(reqwest::Identity::from_pem(format!("{cert}\n{key}").as_bytes()).unwrap());
    }
    b.build().unwrap()
}

/// The status of `GET /healthz` on a fresh connection, or the error chain.
async fn health(client: &reqwest::Client, url: &str) -> Result<u16, String> {
    match client.get(format!("{url}/healthz")).send().await {
        Ok(r) => Ok(r.status().as_u16()),
        Err(e) => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                text.push_str(&format!(": {s}"));
                source = s.source();
            }
            Err(text)
        }
    }
}

fn start_tls(files: &Files, ca: &Ca, extra: &[&str]) -> Server {
    let (cert, key) = ca.server_cert();
    let cert = files.write("server.pem", &cert);
    let key = files.write("server.key", &key);
    let mut args = vec!["--tls-cert", &cert, "--tls-key", &key];
    args.extend_from_slice(extra);
    Ringd::sqlite().args(&args).start()
}

#[tokio::test]
async fn the_rust_client_and_the_cli_connect_over_https() {
    let (files, ca) = (Files::new(), Ca::new("ringd test CA"));
    let ca_path = files.write("ca.pem", &ca.pem());
    let s = start_tls(&files, &ca, &[]);
    assert!(s.url.starts_with("https://127.0.0.1:"), "{}", s.url);

    let http = trusting(&ca.pem(), None);
    let r = http
        .put(format!("{}/v1/rings/r", s.url))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    // Plain HTTP to the TLS port gets no answer.
    let plain = s.url.replacen("https://", "http://", 1);
    assert!(health(&reqwest::Client::new(), &plain).await.is_err());

    let client = RingClient::builder(&[&s.url], "r")
        .tls(TlsSettings::default().ca_cert_pem(ca.pem()))
        .start()
        .unwrap();
    let view = client.ready(Duration::from_secs(10)).await.unwrap();
    assert_eq!(view.version(), 1);
    // The watch stream (and the ack) run over TLS too.
    let r = http
        .put(format!("{}/v1/rings/r/nodes/a", s.url))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.version() != Some(2) {
        assert!(Instant::now() < deadline, "the client never saw version 2");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let out = crate::support::cli::ok(
        &s.url,
        &["--ca-cert", &ca_path, "-o", "json", "ring", "show", "r"],
    );
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["version"], 2);
    assert_eq!(shown["nodes"][0]["id"], "a");
    // `follow` runs the client library on the CLI's TLS settings.
    let follow = [
        "--ca-cert",
        &ca_path,
        "follow",
        "r",
        "--client-id",
        "tls-1",
        "--count",
        "1",
    ];
    let out = crate::support::cli::ringd(&s.url, &follow);
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && line.starts_with("v2 "), "{line}");
    // The same through the environment variable.
    let out = crate::support::cli::command(&s.url, &["-o", "json", "ring", "list"])
        .env("RINGD_CA_CERT", &ca_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Without the CA the CLI cannot reach a trusted server: exit code 3.
    let out = crate::support::cli::ringd(&s.url, &["ring", "show", "r"]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("UnknownIssuer"), "{err}");
    // A CA file that is not PEM is a clear refusal.
    let junk = files.write("junk.pem", "not a certificate\n");
    let out = crate::support::cli::ringd(&s.url, &["--ca-cert", &junk, "ring", "show", "r"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("CA certificate file holds no PEM certificate"),
        "{err}"
    );
}

#[tokio::test]
async fn mutual_tls_refuses_clients_without_a_certificate_from_the_ca() {
    let (files, ca, other) = (Files::new(), Ca::new("ringd CA"), Ca::new("other CA"));
    let client_ca = files.write("clients.pem", &ca.pem());
    let s = start_tls(&files, &ca, &["--tls-client-ca", &client_ca]);

    let good = ca.client_cert();
    assert_eq!(
        health(&trusting(&ca.pem(), Some(&good)), &s.url).await,
        Ok(200)
    );
    let foreign = other.client_cert();
    // The server's alerts say why: a certificate from another CA, and none.
    let refused = health(&trusting(&ca.pem(), Some(&foreign)), &s.url).await;
    assert!(
        refused
            .as_ref()
            .unwrap_err()
            .ends_with("received fatal alert: UnknownCA"),
        "{refused:?}"
    );
    let refused = health(&trusting(&ca.pem(), None), &s.url).await;
    assert!(
        refused
            .as_ref()
            .unwrap_err()
            .ends_with("received fatal alert: CertificateRequired"),
        "{refused:?}"
    );

    // The CLI with a certificate from the CA, and with a foreign one.
    let ca_path = files.write("ca.pem", &ca.pem());
    let cert = files.write("web.pem", &good.0);
    let key = files.write("web.key", &good.1);
    let out = crate::support::cli::ok(
        &s.url,
        &[
            "--ca-cert",
            &ca_path,
            "--client-cert",
            &cert,
            "--client-key",
            &key,
            "-o",
            "json",
            "ring",
            "list",
        ],
    );
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["rings"],
        json!([])
    );
    let cert = files.write("foreign.pem", &foreign.0);
    let key = files.write("foreign.key", &foreign.1);
    let out = crate::support::cli::ringd(
        &s.url,
        &[
            "--ca-cert",
            &ca_path,
            "--client-cert",
            &cert,
            "--client-key",
            &key,
            "ring",
            "list",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Sends SIGHUP to the server and waits until its log has `count` lines
/// containing `needle`.
fn hangup_and_wait(s: &Server, needle: &str, count: usize) {
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -HUP {}", s.pid())])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.log().matches(needle).count() < count {
        assert!(Instant::now() < deadline, "no {needle:?} in\n{}", s.log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn sighup_reloads_the_certificate_and_a_bad_file_keeps_the_old_one() {
    let (files, first, second) = (Files::new(), Ca::new("first CA"), Ca::new("second CA"));
    let s = start_tls(&files, &first, &[]);
    assert_eq!(health(&trusting(&first.pem(), None), &s.url).await, Ok(200));
    assert!(health(&trusting(&second.pem(), None), &s.url)
        .await
        .is_err());

    let (cert, key) = second.server_cert();
    files.write("server.pem", &cert);
    files.write("server.key", &key);
    hangup_and_wait(&s, "SIGHUP: TLS certificate reloaded", 1);
    assert_eq!(
        health(&trusting(&second.pem(), None), &s.url).await,
        Ok(200)
    );
    let old = health(&trusting(&first.pem(), None), &s.url).await;
    assert!(old.unwrap_err().contains("UnknownIssuer"));

    // A key that does not match the certificate: refused, old one kept.
    let (_, other_key) = second.server_cert();
    files.write("server.key", &other_key);
    hangup_and_wait(
        &s,
        "SIGHUP: TLS reload failed; keeping the certificate in use",
        1,
    );
    assert_eq!(
        health(&trusting(&second.pem(), None), &s.url).await,
        Ok(200)
    );
    // An unreadable certificate file: the same.
    std::fs::remove_file(Path::new(&files.path("server.pem"))).unwrap();
    hangup_and_wait(
        &s,
        "SIGHUP: TLS reload failed; keeping the certificate in use",
        2,
    );
    let log = s.log();
    assert!(log.contains("cannot read --tls-cert"), "{log}");
    assert_eq!(
        health(&trusting(&second.pem(), None), &s.url).await,
        Ok(200)
    );
}

#[test]
fn bad_tls_files_stop_the_start() {
    let (files, ca) = (Files::new(), Ca::new("ringd CA"));
    let (cert, _) = ca.server_cert();
    let cert = files.write("server.pem", &cert);
    let key = files.write("server.key", "-----BEGIN NOTHING-----\n");
    let out = crate::support::ringd::Ringd::sqlite()
        .args(&["--tls-cert", &cert, "--tls-key", &key])
        .run_to_exit();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "must not claim to listen");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("--tls-key {key}")), "{err}");

    // Either file alone is a usage error.
    let out = crate::support::ringd::Ringd::sqlite()
        .args(&["--tls-cert", &cert])
        .run_to_exit();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the following required arguments were not provided:\n  --tls-key <PATH>"),
        "{err}"
    );
}

#[test]
fn a_non_loopback_listener_without_tls_warns_that_the_token_is_in_clear_text() {
    const WARNING: &str = "the admin token and every request travel in clear text";
    // The later --listen wins; no traffic is sent to 0.0.0.0.
    let s = Ringd::sqlite()
        .args(&["--listen", "0.0.0.0:0", "--admin-token", "t0ken-for-tests"])
        .start();
    assert!(s.url.starts_with("http://0.0.0.0:"), "{}", s.url);
    assert!(s.log().contains(WARNING), "{}", s.log());

    let (files, ca) = (Files::new(), Ca::new("ringd CA"));
    let s = start_tls(
        &files,
        &ca,
        &["--listen", "0.0.0.0:0", "--admin-token", "t0ken-for-tests"],
    );
    assert!(s.url.starts_with("https://0.0.0.0:"), "{}", s.url);
    assert!(!s.log().contains(WARNING), "{}", s.log());
    // On loopback there is nothing to warn about.
    let s = Ringd::sqlite()
        .args(&["--admin-token", "t0ken-for-tests"])
        .start();
    assert!(!s.log().contains(WARNING), "{}", s.log());
}
