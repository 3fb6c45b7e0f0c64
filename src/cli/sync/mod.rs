//! `ringd sync RING --format F --out PATH --reload CMD [--check CMD]
//! --client-id ID`: the agent that keeps a proxy (nginx, HAProxy,
//! twemproxy) on the ring's latest version.
//!
//! It follows the ring with the client library, which verifies every
//! version's fingerprint. For each new version it renders the proxy's
//! configuration from that verified snapshot (the code behind `GET
//! …/export/{format}`, so the bytes are the same), replaces the file
//! whole, runs the check command, then the reload command. Only when both
//! succeed does it ack the version, as a client of kind `proxy`: a
//! rollout's gate then waits for the proxy, not merely for the agent. If
//! either fails, the previous file goes back, the proxy stays on its
//! version, and the next ack carries the failure (the proxy's own words)
//! for `GET …/clients`, `ringd clients` and the console; the agent tries
//! again on the next version or after a backoff. See `docs/proxies.md`.

mod proxy_command;
mod proxy_file;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use super::export::{Format, ProxySettingsArgs};
use super::follow::{check_ring, parse_client_id, say};
use super::output::{emit, emit_json_line, escape};
use super::{CliError, Context};
use crate::client::{ClientError, RingClient, RingView};
use crate::jitter::random_below;
use crate::placement::Fingerprint;
use crate::ring::proxy_config::{self, ExportOptions};
use crate::ring::{ClientId, ClientKind, RingName};
use proxy_command::ProxyCommand;
use proxy_file::{rendered_version, ProxyFile};

/// How often the client's view is looked at besides its events, so that a
/// retry after a backoff happens on time.
const TICK: Duration = Duration::from_millis(250);
/// The first wait before trying a failed version again; it doubles up to
/// [`RETRY_MAX`] while the same version keeps failing.
const RETRY_MIN: Duration = Duration::from_secs(1);
/// The longest wait before trying a failed version again.
const RETRY_MAX: Duration = Duration::from_secs(60);

/// `ringd sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// The ring.
    pub ring: String,
    /// The proxy; the ring's algorithm must be its mode.
    #[arg(long, value_enum)]
    pub format: Format,
    /// The configuration file to keep, which the proxy's configuration
    /// includes. Its directory must exist.
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,
    /// The shell command that makes the proxy load the file (e.g. `nginx
    /// -s reload`). It sees RINGD_RING, RINGD_VERSION, RINGD_FINGERPRINT
    /// and RINGD_FILE.
    #[arg(long, value_name = "CMD")]
    pub reload: String,
    /// A shell command that checks the configuration with the new file in
    /// place before the reload (e.g. `nginx -t`); if it fails, the old file
    /// goes back and nothing is reloaded.
    #[arg(long, value_name = "CMD")]
    pub check: Option<String>,
    /// The id to ack under, as `ringd clients` lists it: keep it the same
    /// across restarts, so a restarted agent replaces its own entry.
    #[arg(long, value_name = "ID", value_parser = parse_client_id)]
    pub client_id: ClientId,
    /// How long the check and the reload may each run before they are
    /// killed and the version counts as failed.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = crate::ring::durations::parse_duration)]
    pub command_timeout: Duration,
    /// What the configuration holds besides the placement.
    #[command(flatten)]
    pub settings: ProxySettingsArgs,
}

/// Keeps the proxy on the latest version until SIGINT or SIGTERM (exit
/// 0). Arguments that cannot work exit 2 before anything is written.
pub async fn run(ctx: &Context, a: SyncArgs) -> Result<(), CliError> {
    let refused = |message: String| CliError::Usage(ClientError::InvalidSetting(message));
    let ring = RingName::new(&a.ring).map_err(|e| refused(e.to_string()))?;
    let format = a.format.proxy();
    let options = ExportOptions::check(format, &ring, a.settings.settings())
        .map_err(|e| refused(e.to_string()))?;
    let file = ProxyFile::new(&a.out).map_err(refused)?;
    if a.reload.trim().is_empty() {
        return Err(refused(
            "--reload is empty: give the command that makes the proxy load the file".into(),
        ));
    }
    if a.command_timeout.is_zero() {
        return Err(refused("--command-timeout must be more than zero".into()));
    }
    say(&format!(
        "syncing {} for ring {} as client {} via {}",
        a.out.display(),
        a.ring,
        a.client_id,
        ctx.endpoints.urls().join(",")
    ));
    check_ring(ctx, &a.ring).await?;
    file.clean();
    let client = ctx
        .ring_client(&a.ring)
        .client_id(a.client_id.as_str())
        .kind(ClientKind::Proxy)
        .ack_on_confirm(true)
        .start()
        .map_err(CliError::Usage)?;
    let mut agent = Agent {
        ring,
        options,
        file,
        check: a.check.map(|text| ProxyCommand {
            role: "check",
            text,
        }),
        reload: ProxyCommand {
            role: "reload",
            text: a.reload,
        },
        timeout: a.command_timeout,
        json: ctx.json(),
        client_id: a.client_id.to_string(),
        on: None,
        failed: None,
    };
    agent.adopt_file(&client).await?;
    let mut events = client.subscribe();
    let stop = crate::server::shutdown_signal();
    tokio::pin!(stop);
    let mut tick = tokio::time::interval(TICK);
    let mut first = true;
    loop {
        tokio::select! {
            biased;
            () = stop.as_mut() => return Ok(()),
            event = events.recv() => if let Err(RecvError::Closed) = event {
                return Err(ClientError::Closed.into());
            },
            _ = tick.tick() => {}
        }
        let Some(view) = client.current() else {
            continue;
        };
        if first {
            first = false;
            let algorithm = view.placement().config().algorithm;
            if algorithm != format.algorithm() {
                return Err(refused(format!(
                    "ring `{}` places keys with `{algorithm}`, which {format} does not compute: \
                     only a `{}` ring can be synced to {format}",
                    a.ring,
                    format.algorithm()
                )));
            }
        }
        agent.step(&client, &view).await?;
    }
}

/// A version that failed, and when to try it again.
struct Failed {
    version: u64,
    fingerprint: Fingerprint,
    attempts: u32,
    retry_at: Instant,
}

/// The agent's state: what the proxy runs, and what failed last.
struct Agent {
    ring: RingName,
    options: ExportOptions,
    file: ProxyFile,
    check: Option<ProxyCommand>,
    reload: ProxyCommand,
    timeout: Duration,
    json: bool,
    client_id: String,
    /// The version the proxy runs, as far as the agent knows.
    on: Option<(u64, Fingerprint)>,
    failed: Option<Failed>,
}

impl Agent {
    /// A file this agent wrote before (a restart) names the version the
    /// proxy should run. The agent may have died between writing it and
    /// the reload, so it checks and reloads that file as it is, and acks
    /// its version once both succeed: the proxy is counted before the
    /// first new version arrives, and never for a file it did not load.
    /// If either fails, the first version the agent sees is applied as
    /// any other.
    async fn adopt_file(&mut self, client: &RingClient) -> Result<(), CliError> {
        let bytes = self.file.read().map_err(|e| self.io_refusal(&e))?;
        let format = self.options.format().name();
        let Some((version, fingerprint)) = bytes
            .as_deref()
            .and_then(|b| rendered_version(b, self.ring.as_str(), format))
        else {
            return Ok(());
        };
        if let Err(error) = self.check_and_reload(version, fingerprint).await {
            say(&format!(
                "the proxy did not load v{version} from {} again: {}",
                self.file.path().display(),
                escape(&error)
            ));
            return Ok(());
        }
        client.confirm(version, fingerprint)?;
        self.on = Some((version, fingerprint));
        Ok(())
    }

    fn io_refusal(&self, e: &std::io::Error) -> CliError {
        CliError::Usage(ClientError::InvalidSetting(format!(
            "cannot read {}: {e}",
            self.file.path().display()
        )))
    }

    /// Brings the proxy to `view` unless it is there already, or that
    /// version failed and its backoff has not passed.
    async fn step(&mut self, client: &RingClient, view: &Arc<RingView>) -> Result<(), CliError> {
        let target = (view.version(), view.fingerprint());
        if self.on == Some(target) {
            return Ok(());
        }
        let attempts = match &self.failed {
            Some(f) if (f.version, f.fingerprint) == target => {
                if Instant::now() < f.retry_at {
                    return Ok(());
                }
                f.attempts
            }
            _ => 0,
        };
        let started = Instant::now();
        match self.apply(view).await {
            Ok(()) => {
                client.confirm(target.0, target.1)?;
                self.on = Some(target);
                self.failed = None;
                self.print_applied(view, started.elapsed())
            }
            Err(error) => {
                client.report_failure(target.0, &error)?;
                let wait = retry_wait(attempts);
                self.failed = Some(Failed {
                    version: target.0,
                    fingerprint: target.1,
                    attempts: attempts + 1,
                    retry_at: Instant::now() + wait,
                });
                self.print_failed(target.0, &error, wait)
            }
        }
    }

    /// Renders `view`, replaces the file, checks and reloads; on any
    /// failure puts the previous file back. The error is for a person.
    async fn apply(&self, view: &RingView) -> Result<(), String> {
        let text =
            proxy_config::render(&self.ring, view.version(), view.placement(), &self.options)
                .map_err(|e| format!("cannot render version {}: {e}", view.version()))?;
        let previous = self
            .file
            .read()
            .map_err(|e| format!("cannot read {}: {e}", self.file.path().display()))?;
        self.file
            .replace(text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", self.file.path().display()))?;
        let outcome = self
            .check_and_reload(view.version(), view.fingerprint())
            .await;
        if let Err(error) = outcome {
            return Err(match self.file.restore(previous.as_deref()) {
                Ok(()) => error,
                Err(e) => format!(
                    "{error}; and putting the previous {} back failed: {e}",
                    self.file.path().display()
                ),
            });
        }
        Ok(())
    }

    /// Runs the check, then the reload, on the file as it is.
    async fn check_and_reload(&self, version: u64, fingerprint: Fingerprint) -> Result<(), String> {
        let env = [
            ("RINGD_RING", self.ring.to_string()),
            ("RINGD_VERSION", version.to_string()),
            ("RINGD_FINGERPRINT", fingerprint.to_string()),
            ("RINGD_FILE", self.file.path().display().to_string()),
        ];
        if let Some(check) = &self.check {
            check.run(&env, self.timeout).await?;
        }
        self.reload.run(&env, self.timeout).await
    }

    fn print_applied(&self, view: &RingView, took: Duration) -> Result<(), CliError> {
        let active = view.placement().nodes().len();
        if self.json {
            return emit_json_line(&json!({
                "event": "applied",
                "ring": self.ring.as_str(),
                "client_id": self.client_id,
                "version": view.version(),
                "fingerprint": view.fingerprint().to_string(),
                "active_nodes": active,
                "file": self.file.path().display().to_string(),
                "took_ms": took.as_millis() as u64,
            }));
        }
        let noun = if active == 1 { "server" } else { "servers" };
        emit(&format!(
            "v{} {} {active} {noun}: written, checked and reloaded in {} ms\n",
            view.version(),
            view.fingerprint(),
            took.as_millis()
        ))
    }

    fn print_failed(&self, version: u64, error: &str, retry: Duration) -> Result<(), CliError> {
        let kept = self.on.map(|(v, _)| v);
        if self.json {
            return emit_json_line(&json!({
                "event": "failed",
                "ring": self.ring.as_str(),
                "client_id": self.client_id,
                "version": version,
                "error": error,
                "kept": kept,
                "retry_in_ms": retry.as_millis() as u64,
            }));
        }
        let kept = kept.map_or_else(
            || "the file is as it was".to_owned(),
            |v| format!("the proxy stays on v{v}"),
        );
        // The error quotes the proxy and the server: one escaped line.
        emit(&format!(
            "v{version} failed: {}; {kept}; retrying in {} s unless a newer version comes\n",
            escape(error),
            retry.as_secs_f64().round() as u64
        ))
    }
}

/// The wait before trying a failed version again after `attempts` earlier
/// failures of it: doubling from [`RETRY_MIN`] to [`RETRY_MAX`], drawn from
/// the upper half so that a fleet of agents does not retry in step.
fn retry_wait(attempts: u32) -> Duration {
    let step = RETRY_MIN
        .saturating_mul(1 << attempts.min(16))
        .min(RETRY_MAX);
    step / 2 + random_below(step / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_to_a_minute() {
        for (attempts, low, high) in [
            (0, 500, 1000),
            (1, 1000, 2000),
            (3, 4000, 8000),
            (9, 30_000, 60_000),
            (40, 30_000, 60_000),
        ] {
            let w = retry_wait(attempts).as_millis();
            assert!((low..high).contains(&w), "{attempts}: {w}");
        }
    }
}
