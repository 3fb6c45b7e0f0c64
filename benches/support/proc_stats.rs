//! A process's CPU time and storage writes, from `/proc/PID/stat` and
//! `/proc/PID/io`, so a load tool can say what a server spent during one
//! phase of a run: the difference of two samples.
//!
//! `write_bytes` counts what the process sent towards the storage layer
//! (pages it dirtied in files), not what went through pipes or sockets
//! (those are in `wchar`), which is what "no disk write per request" is
//! about.

use std::time::Instant;

/// One reading of a process's counters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProcSample {
    /// When it was read.
    pub(crate) at: Instant,
    /// User plus system CPU time, in clock ticks.
    pub(crate) cpu_ticks: u64,
    /// Bytes sent towards storage (`write_bytes`).
    pub(crate) write_bytes: u64,
    /// Of those, bytes whose write was cancelled (a truncated file's dirty
    /// pages) before reaching storage (`cancelled_write_bytes`).
    pub(crate) cancelled_write_bytes: u64,
}

/// Why a process could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProcError {
    /// The file could not be read: the process is gone, or belongs to
    /// another user.
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// The file did not hold the field where the kernel puts it.
    #[error("{path} has no readable `{field}`")]
    Field { path: String, field: &'static str },
}

/// Reads `pid`'s counters now (`"self"` for this process).
pub(crate) fn sample(pid: &str) -> Result<ProcSample, ProcError> {
    let at = Instant::now();
    let read = |file: &str| {
        let path = format!("/proc/{pid}/{file}");
        std::fs::read_to_string(&path).map_err(|source| ProcError::Read { path, source })
    };
    let stat = read("stat")?;
    let io = read("io")?;
    let missing = |file: &str, field| ProcError::Field {
        path: format!("/proc/{pid}/{file}"),
        field,
    };
    // The command name (field 2) is in parentheses and may hold spaces,
    // so fields are counted from the last ')': field 3 comes first.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |n: usize, name| {
        fields
            .get(n - 3)
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| missing("stat", name))
    };
    let cpu_ticks = field(14, "utime")? + field(15, "stime")?;
    let io_field = |name| {
        io.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| missing("io", name))
    };
    Ok(ProcSample {
        at,
        cpu_ticks,
        write_bytes: io_field("write_bytes")?,
        cancelled_write_bytes: io_field("cancelled_write_bytes")?,
    })
}

/// The kernel's clock ticks per second (`getconf CLK_TCK`), 100 when it
/// cannot be asked, which is what Linux uses on every common platform.
pub(crate) fn clock_ticks() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .filter(|t| *t > 0)
        .unwrap_or(100)
}

/// What a process spent between two samples.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProcDelta {
    /// CPU time as a percentage of one core over the wall time between
    /// the samples.
    pub(crate) cpu_percent: f64,
    /// Bytes sent towards storage, less those cancelled.
    pub(crate) write_bytes: u64,
}

impl ProcSample {
    /// What the process spent from `self` to `later`.
    pub(crate) fn until(&self, later: &ProcSample, ticks_per_second: u64) -> ProcDelta {
        let wall = later.at.duration_since(self.at).as_secs_f64();
        let cpu = later.cpu_ticks.saturating_sub(self.cpu_ticks) as f64 / ticks_per_second as f64;
        let written = later.write_bytes.saturating_sub(self.write_bytes);
        let cancelled = later
            .cancelled_write_bytes
            .saturating_sub(self.cancelled_write_bytes);
        ProcDelta {
            cpu_percent: if wall > 0.0 { cpu / wall * 100.0 } else { 0.0 },
            write_bytes: written.saturating_sub(cancelled),
        }
    }
}
