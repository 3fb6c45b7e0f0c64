//! A fleet of followers in one child process: the Rust client (this
//! program's own `followers` subcommand), or the Go, JavaScript or Python
//! client's follower program, all speaking one contract:
//!
//! ```text
//! <program> --url URL --rings r0,r1,… --followers N --protocol sse|long-poll
//! ```
//!
//! Follower `i` follows ring `i mod R` with its client's default settings
//! and writes `<i> <version>` on stdout for every version it applies. The
//! fleet stamps each line as it arrives, so what it measures is when each
//! follower routed on a version, as its application would see it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::ValueEnum;

/// Which client the followers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Language {
    Rust,
    Go,
    Js,
    Python,
}

/// Each follower's newest version and when it was applied.
type Latest = Vec<(u64, Instant)>;

pub(crate) struct Fleet {
    child: Child,
    latest: Arc<Mutex<Latest>>,
    rings: usize,
    /// The followers' stderr.
    pub log: PathBuf,
}

/// The command that runs `language`'s follower program, from the
/// repository's root (where `reconnect_storm.sh` runs this tool).
fn program(language: Language) -> Command {
    match language {
        Language::Rust => {
            let mut c = Command::new(std::env::current_exe().expect("this program"));
            c.arg("followers");
            c
        }
        // Built by reconnect_storm.sh, from clients/go/benchmarks/followers.
        Language::Go => Command::new("target/reconnect_storm/go-followers"),
        Language::Js => {
            let mut c = Command::new("node");
            c.arg("clients/js/bench/followers.mjs");
            c
        }
        Language::Python => {
            let mut c = Command::new("target/python-client-venv/bin/python");
            c.arg("clients/python/benchmarks/followers.py");
            c
        }
    }
}

impl Fleet {
    /// Starts `n` followers of `rings` on the server at `url`.
    pub(crate) fn start(
        language: Language,
        url: &str,
        rings: &[String],
        n: usize,
        long_poll: bool,
        dir: &Path,
    ) -> Self {
        let log = dir.join(format!("followers-{language:?}.log").to_lowercase());
        let mut child = program(language)
            .args(["--url", url, "--rings", &rings.join(",")])
            .args(["--followers", &n.to_string()])
            .args(["--protocol", if long_poll { "long-poll" } else { "sse" }])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("follower log"))
            .spawn()
            .unwrap_or_else(|e| panic!("start the {language:?} followers: {e}"));
        let start = Instant::now();
        let latest = Arc::new(Mutex::new(vec![(0, start); n]));
        let stdout = child.stdout.take().expect("stdout");
        let into = latest.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let at = Instant::now();
                let parsed = line
                    .split_once(' ')
                    .and_then(|(i, v)| Some((i.parse::<usize>().ok()?, v.parse::<u64>().ok()?)));
                let Some((i, v)) = parsed else {
                    panic!("a follower line is `<index> <version>`, not {line:?}");
                };
                let mut latest = into.lock().expect("latest");
                let slot = latest
                    .get_mut(i)
                    .unwrap_or_else(|| panic!("follower {i} of {n}"));
                if v > slot.0 {
                    *slot = (v, at);
                }
            }
        });
        Self {
            child,
            latest,
            rings: rings.len(),
            log,
        }
    }

    /// The CPU time the followers' process has used.
    pub(crate) fn cpu(&self) -> Duration {
        cpu_of(self.child.id())
    }

    /// How many followers hold at least `versions[ring]` of their ring.
    pub(crate) fn on(&self, versions: &[u64]) -> usize {
        let latest = self.latest.lock().expect("latest");
        latest
            .iter()
            .enumerate()
            .filter(|(i, (v, _))| *v >= versions[i % self.rings])
            .count()
    }

    /// Waits until every follower holds `versions` of its ring; then when
    /// each one applied its newest version, or `None` after `deadline`
    /// (or if the fleet died).
    pub(crate) fn wait_all(
        &mut self,
        versions: &[u64],
        deadline: Duration,
    ) -> Option<Vec<Instant>> {
        let until = Instant::now() + deadline;
        loop {
            let latest = self.latest.lock().expect("latest").clone();
            if latest
                .iter()
                .enumerate()
                .all(|(i, (v, _))| *v >= versions[i % self.rings])
            {
                return Some(latest.into_iter().map(|(_, at)| at).collect());
            }
            if Instant::now() > until || !matches!(self.child.try_wait(), Ok(None)) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The CPU time (user and system) process `pid` has used, from
/// `/proc/<pid>/stat` (in clock ticks of 1/100 s on Linux).
pub(crate) fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line, 11 and 12 (from 0) after the name.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}
