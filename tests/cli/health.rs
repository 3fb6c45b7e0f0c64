//! `ringd health`: the probe the container image's HEALTHCHECK runs, and
//! the configuration file, completions and man page the packages ship.

use crate::support::cli::{ok, ringd};
use crate::support::ringd::Ringd;

#[test]
fn health_answers_ok_and_ready_and_3_when_nothing_answers() {
    let s = Ringd::sqlite().start();
    assert_eq!(ok(&s.url, &["health"]), "ok\n");
    assert_eq!(ok(&s.url, &["health", "--ready"]), "ready\n");
    assert_eq!(
        ok(&s.url, &["-o", "json", "health"]),
        "{\n  \"status\": \"ok\"\n}\n"
    );
    let out = ringd("http://127.0.0.1:1", &["health"]);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn completions_and_the_man_page_name_the_commands() {
    let bash = ok("http://127.0.0.1:1", &["completions", "bash"]);
    assert!(bash.contains("complete -F _ringd"), "{bash}");
    assert!(bash.contains("--watch-keepalive"));
    let zsh = ok("http://127.0.0.1:1", &["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef ringd"), "{zsh}");
    let fish = ok("http://127.0.0.1:1", &["completions", "fish"]);
    assert!(fish.contains("complete -c ringd"), "{fish}");
    let man = ok("http://127.0.0.1:1", &["man"]);
    assert!(man.starts_with(".ie \\n(.g .ds Aq \\(aq"), "{}", &man[..80]);
    assert!(man.contains(".TH ringd 1"));
    assert!(man.contains(".SH \"RINGD SERVE\""));
    assert!(man.contains("\\-\\-config"));
    let out = ringd("http://127.0.0.1:1", &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn serve_reads_its_configuration_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ringd.toml");
    std::fs::write(&config, "retention = 3\nlisen = \"x\"\n").unwrap();
    let out = Ringd::sqlite()
        .args(&["--config", config.to_str().unwrap()])
        .run_to_exit();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "must not claim to listen");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: the configuration file {}: unknown setting `lisen`; the settings are the flags of `ringd serve --help` without their dashes\n",
            config.display()
        )
    );
    // A good file: the server starts with its settings, under the
    // launcher's own --listen and --store on the command line.
    std::fs::write(&config, "retention = 3\nlisten = \"0.0.0.0:1\"\n").unwrap();
    let s = Ringd::sqlite()
        .args(&["--config", config.to_str().unwrap()])
        .start();
    assert_eq!(ok(&s.url, &["health"]), "ok\n");
}
