//! `ringd serve` against an etcd that demands credentials: TLS with a
//! client certificate, and user/password authentication. Wrong or missing
//! credentials stop ringd at start-up with a message naming the problem.
#![cfg(feature = "server")]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::etcd::Etcd;
use crate::support::ringd::{Ringd, Server};

/// Runs `ringd serve` with `args` and `env`, expecting it to fail at
/// start-up; returns its exit code and stderr.
fn serve_fails(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ringd"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .env_remove("RINGD_STORE")
        .env_remove("RINGD_ETCD_USER")
        .env_remove("RINGD_ETCD_PASSWORD")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ringd");
    let deadline = Instant::now() + Duration::from_secs(40);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("ringd kept running with bad etcd credentials");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    assert!(out.stdout.is_empty(), "it must not report listening");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Creates a ring through `ringd` and reads back its version.
async fn create_and_read(ringd: &Server) -> serde_json::Value {
    let http = reqwest::Client::new();
    let created = http
        .put(format!("{}/v1/rings/secure", ringd.url))
        .json(&serde_json::json!({"algorithm": "ring"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let node = http
        .put(format!("{}/v1/rings/secure/nodes/n1", ringd.url))
        .json(&serde_json::json!({"address": "10.0.0.1:1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(node.status(), 201);
    http.get(format!("{}/v1/rings/secure/snapshot", ringd.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_client_certificate() {
    let etcd = Etcd::start_tls().await;
    let certs = etcd.tls.as_ref().expect("TLS etcd");
    let store = etcd.store_url();
    let path = |p: &std::path::PathBuf| p.display().to_string();
    let (ca, cert, key) = (
        path(&certs.ca),
        path(&certs.client_cert),
        path(&certs.client_key),
    );
    let ringd = Ringd::on(&store)
        .prefix("/tls")
        .args(&[
            "--etcd-ca-cert",
            &ca,
            "--etcd-cert",
            &cert,
            "--etcd-key",
            &key,
        ])
        .start();
    let snapshot = create_and_read(&ringd).await;
    assert_eq!(snapshot["version"], 2, "{snapshot}");
    assert_eq!(snapshot["nodes"][0]["id"], "n1", "{snapshot}");
    // The ring really is in the TLS-only etcd.
    let mut direct = etcd.client().await;
    let meta = direct.get("/tls/rings/secure", None).await.unwrap();
    assert_eq!(meta.kvs().len(), 1);

    // Without a client certificate the TLS handshake is refused.
    let (code, stderr) = serve_fails(
        &[
            "--store",
            &store,
            "--etcd-prefix",
            "/tls",
            "--etcd-ca-cert",
            &ca,
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot open the store {store}: store unavailable")),
        "{stderr}"
    );
    // Without TLS at all, the plain-text client cannot talk to it either.
    let (code, stderr) = serve_fails(&["--store", &store, "--etcd-prefix", "/tls"], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("store unavailable"), "{stderr}");
    // A half-given identity is refused before connecting.
    let (code, stderr) = serve_fails(&["--store", &store, "--etcd-cert", &cert], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "etcd credentials: --etcd-cert needs --etcd-key (the certificate's private key)"
        ),
        "{stderr}"
    );
    let (code, stderr) = serve_fails(
        &["--store", &store, "--etcd-ca-cert", "/nonexistent/ca.pem"],
        &[],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("etcd credentials: cannot read /nonexistent/ca.pem"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_and_password() {
    let etcd = Etcd::start().await;
    let mut admin = etcd.client().await;
    admin.user_add("root", "root-pw", None).await.unwrap();
    admin.user_grant_role("root", "root").await.unwrap();
    admin.auth_enable().await.unwrap();
    let store = etcd.store_url();

    // The password comes from the environment, as operators should pass it.
    let ringd = Ringd::on(&store)
        .prefix("/auth")
        .args(&["--etcd-user", "root"])
        .envs(&[("RINGD_ETCD_PASSWORD", "root-pw")])
        .start();
    let snapshot = create_and_read(&ringd).await;
    assert_eq!(snapshot["version"], 2, "{snapshot}");

    // An unauthenticated client is refused by etcd: the data is protected.
    let mut anonymous = etcd_client::Client::connect([&etcd.endpoint], None)
        .await
        .unwrap();
    assert!(anonymous.get("/auth/rings/secure", None).await.is_err());

    let (code, stderr) = serve_fails(
        &[
            "--store",
            &store,
            "--etcd-prefix",
            "/auth",
            "--etcd-user",
            "root",
        ],
        &[("RINGD_ETCD_PASSWORD", "wrong")],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "authentication failed, invalid user ID or password\"; \
             check the etcd user and password given to ringd"
        ),
        "{stderr}"
    );
    let (code, stderr) = serve_fails(&["--store", &store, "--etcd-prefix", "/auth"], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "user name is empty\"; etcd has authentication enabled: \
             give ringd an etcd user and password"
        ),
        "{stderr}"
    );
    let (code, stderr) = serve_fails(&["--store", &store, "--etcd-user", "root"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "etcd credentials: --etcd-user needs --etcd-password (or RINGD_ETCD_PASSWORD)"
        ),
        "{stderr}"
    );
}
