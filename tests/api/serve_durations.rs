//! Every duration flag of `ringd serve` has bounds, refused at start-up
//! with the flag, the value and the allowed range, and shown in `--help`.

use std::process::Command;

use crate::support::ringd::Ringd;

/// `ringd serve ARGS` must exit 2 (a usage error) printing exactly `expected`.
fn refused(args: &[&str], expected: &str) {
    let out = Ringd::sqlite().args(args).run_to_exit();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty(), "must not claim to listen");
    assert_eq!(String::from_utf8_lossy(&out.stderr), expected, "{args:?}");
}

#[test]
fn keepalives_outside_1s_to_5m_are_refused() {
    refused(
        &["--watch-keepalive", "0"],
        "error: invalid value '0' for '--watch-keepalive <DURATION>': `0` is below the 1s minimum; use 1s to 5m\n\nFor more information, try '--help'.\n",
    );
    refused(
        &["--watch-keepalive", "999ms"],
        "error: invalid value '999ms' for '--watch-keepalive <DURATION>': `999ms` is below the 1s minimum; use 1s to 5m\n\nFor more information, try '--help'.\n",
    );
    refused(
        &["--watch-keepalive", "301s"],
        "error: invalid value '301s' for '--watch-keepalive <DURATION>': `301s` is above the 5m maximum; use 1s to 5m\n\nFor more information, try '--help'.\n",
    );
}

#[test]
fn client_ttls_outside_10s_to_24h_are_refused() {
    refused(
        &["--client-ttl", "0s"],
        "error: invalid value '0s' for '--client-ttl <DURATION>': `0s` is below the 10s minimum; use 10s to 24h\n\nFor more information, try '--help'.\n",
    );
    refused(
        &["--client-ttl", "25h"],
        "error: invalid value '25h' for '--client-ttl <DURATION>': `25h` is above the 24h maximum; use 10s to 24h\n\nFor more information, try '--help'.\n",
    );
    refused(
        &["--client-ttl", "soon"],
        "error: invalid value 'soon' for '--client-ttl <DURATION>': `soon` is not a duration: use e.g. 500ms, 15s, 5m or 1h\n\nFor more information, try '--help'.\n",
    );
}

#[tokio::test]
async fn the_bounds_themselves_are_accepted() {
    for args in [
        ["--watch-keepalive", "1s", "--client-ttl", "10s"],
        ["--watch-keepalive", "5m", "--client-ttl", "24h"],
    ] {
        let s = Ringd::sqlite().args(&args).start();
        assert_eq!(s.get("/healthz").await.status(), 200, "{args:?}");
    }
}

#[test]
fn help_shows_the_bounds() {
    let out = Command::new(env!("CARGO_BIN_EXE_ringd"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for line in [
        "--watch-keepalive <DURATION>\n          How often an idle watch stream gets a keep-alive event (1s to 5m; e.g. 500ms, 15s, 5m, 1h)",
        "--client-ttl <DURATION>\n          How long a client's ack counts after it was sent (10s to 24h; e.g. 500ms, 15s, 5m, 1h)",
    ] {
        assert!(help.contains(line), "no {line:?} in\n{help}");
    }
}
