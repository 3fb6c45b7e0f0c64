//! `ringd rollout …`: plan, start, follow and control rollouts, a change
//! applied in paced steps (see `docs/rollouts.md`).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use reqwest::Method;
use serde_json::{json, Map, Value};

use super::change::read_body;
use super::context::{decode, ring_path};
use super::output::{emit, emit_json, fields, percent, share_bar, Align, Table};
use super::{CliError, Context};
use crate::wire::{RolloutPlanView, RolloutView, StepView};

/// `ringd rollout …`.
#[derive(Debug, Subcommand)]
pub enum RolloutCommand {
    /// Show the steps a rollout of a change would commit; commit nothing.
    Plan(StartArgs),
    /// Start a rollout of a change.
    Start(StartArgs),
    /// Show a rollout (the ring's newest without ID); with --watch,
    /// follow it until it finishes.
    Status(StatusArgs),
    /// Pause a rollout before its next step.
    Pause(ControlArgs),
    /// Resume a paused rollout.
    Resume(ControlArgs),
    /// Take the next step without waiting for the pending gate, once.
    Advance(ControlArgs),
    /// Walk a rollout back to where it started.
    Abort(AbortArgs),
}

/// What to do when a gate times out.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OnTimeout {
    /// Pause the rollout.
    Pause,
    /// Take the next step anyway.
    Proceed,
}

/// `ringd rollout plan|start RING FILE [policy flags]`.
#[derive(Debug, Args)]
pub struct StartArgs {
    /// The ring.
    pub ring: String,
    /// The change as JSON: `{"ops":[…],"reason":…}` as for `ringd change
    /// apply`, optionally with a `policy` object; `-` reads stdin.
    pub file: PathBuf,
    /// Exactly this many steps.
    #[arg(long, value_name = "N")]
    pub steps: Option<u64>,
    /// As few steps as keep each one's moved fraction at most this.
    #[arg(long, value_name = "FRACTION")]
    pub max_moved: Option<f64>,
    /// Share of live clients each step waits for [default: 1].
    #[arg(long, value_name = "SHARE")]
    pub gate: Option<f64>,
    /// Shortest time between steps (`30s`, `5m`) [default: 0s].
    #[arg(long, value_name = "DURATION")]
    pub min_dwell: Option<String>,
    /// How long a step waits for its gate [default: 10m].
    #[arg(long, value_name = "DURATION")]
    pub gate_timeout: Option<String>,
    /// What a timed-out gate does [default: pause].
    #[arg(long, value_enum)]
    pub on_gate_timeout: Option<OnTimeout>,
    /// `table` rings: most slot moves onto or off one node per step.
    #[arg(long, value_name = "N")]
    pub max_moves_per_node: Option<u64>,
}

/// `ringd rollout status RING [ID] [--watch]`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The ring.
    pub ring: String,
    /// The rollout [default: the ring's newest].
    pub id: Option<u64>,
    /// Follow it, one line per change, until it is done (exit 0), aborted
    /// or paused (exit 1).
    #[arg(long)]
    pub watch: bool,
}

/// `ringd rollout pause|resume|advance RING ID`.
#[derive(Debug, Args)]
pub struct ControlArgs {
    /// The ring.
    pub ring: String,
    /// The rollout.
    pub id: u64,
}

/// `ringd rollout abort RING ID [--immediate]`.
#[derive(Debug, Args)]
pub struct AbortArgs {
    /// The ring.
    pub ring: String,
    /// The rollout.
    pub id: u64,
    /// One version back to the start, without gates.
    #[arg(long)]
    pub immediate: bool,
}

/// Runs a `rollout` subcommand.
pub async fn run(ctx: &Context, command: RolloutCommand) -> Result<(), CliError> {
    match command {
        RolloutCommand::Plan(a) => start(ctx, a, true).await,
        RolloutCommand::Start(a) => start(ctx, a, false).await,
        RolloutCommand::Status(a) => status(ctx, a).await,
        RolloutCommand::Pause(a) => control(ctx, &a.ring, a.id, "pause", json!({})).await,
        RolloutCommand::Resume(a) => control(ctx, &a.ring, a.id, "resume", json!({})).await,
        RolloutCommand::Advance(a) => control(ctx, &a.ring, a.id, "advance", json!({})).await,
        RolloutCommand::Abort(a) => {
            let body = json!({"immediate": a.immediate});
            control(ctx, &a.ring, a.id, "abort", body).await
        }
    }
}

/// The file's body with the flags' policy fields set over its own.
fn body_of(a: &StartArgs, dry_run: bool) -> Result<Map<String, Value>, CliError> {
    let mut body = read_body(&a.file)?;
    let mut policy = match body.remove("policy") {
        Some(Value::Object(p)) => p,
        None => Map::new(),
        Some(_) => return Err(CliError::Refused("`policy` must be a JSON object".into())),
    };
    let mut set = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            policy.insert(k.to_owned(), v);
        }
    };
    set("steps", a.steps.map(Into::into));
    set("max_moved_fraction_per_step", a.max_moved.map(Into::into));
    set("gate", a.gate.map(Into::into));
    set("min_dwell", a.min_dwell.clone().map(Into::into));
    set("gate_timeout", a.gate_timeout.clone().map(Into::into));
    set(
        "on_gate_timeout",
        a.on_gate_timeout.map(|o| match o {
            OnTimeout::Pause => "pause".into(),
            OnTimeout::Proceed => "proceed".into(),
        }),
    );
    set(
        "max_moves_per_node_per_step",
        a.max_moves_per_node.map(Into::into),
    );
    body.insert("policy".into(), Value::Object(policy));
    body.insert("dry_run".into(), dry_run.into());
    Ok(body)
}

async fn start(ctx: &Context, a: StartArgs, dry_run: bool) -> Result<(), CliError> {
    let body = Value::Object(body_of(&a, dry_run)?);
    let path = ring_path(&a.ring, "/rollouts");
    let answer = ctx
        .request(Method::POST, &path, Some(&body), &[])
        .await?
        .body;
    if ctx.json() {
        return emit_json(&answer);
    }
    if dry_run {
        let plan: RolloutPlanView = decode("plan", &answer)?;
        let mut out = format!(
            "plan for ring {} from version {}: {} steps, {} in all (at once: {})\n\n",
            plan.ring,
            plan.base_version,
            plan.steps.len(),
            percent(plan.total_moved_fraction),
            percent(plan.direct_moved_fraction)
        );
        out.push_str(&steps_table(&plan.steps, Some(plan.base_version)));
        for n in &plan.notes {
            out.push_str(&format!("\nnote: {n}\n"));
        }
        out.push_str("\ndry run: nothing committed\n");
        return emit(&out);
    }
    let r: RolloutView = decode("rollout", &answer)?;
    emit(&format!(
        "rollout {} of ring {} started: {} steps from version {}\nfollow it with: ringd rollout status {} {} --watch\n",
        r.id, r.ring, r.steps, r.base_version, r.ring, r.id
    ))
}

fn steps_table(steps: &[StepView], base: Option<u64>) -> String {
    let mut t = Table::new(&[
        ("STEP", Align::Right),
        ("VERSION", Align::Right),
        ("MOVED", Align::Right),
        ("WHAT", Align::Left),
    ]);
    for s in steps {
        let version = s
            .version
            .or_else(|| base.map(|b| b + u64::from(s.step)))
            .map_or_else(|| "-".to_owned(), |v| v.to_string());
        t.row(vec![
            s.step.to_string(),
            version,
            percent(s.moved_fraction),
            s.summary.clone(),
        ]);
    }
    t.render()
}

/// One line of progress: the bar, the state and the gate.
fn progress_line(r: &RolloutView) -> String {
    let share = if r.steps == 0 {
        1.0
    } else {
        f64::from(r.step) / f64::from(r.steps)
    };
    let mut line = format!(
        "step {}/{} {:<w$} {}",
        r.step,
        r.steps,
        share_bar(share),
        r.state,
        w = super::output::BAR_WIDTH
    );
    if r.direction == "back" {
        line.push_str(" (aborting)");
    }
    if let Some(g) = &r.gate {
        line.push_str(&format!(
            ": {} of {} clients on version {}",
            g.acked, g.live, g.version
        ));
        if !g.lagging.is_empty() {
            line.push_str(&format!(" (lagging: {})", g.lagging.join(", ")));
        }
    }
    if let Some(why) = &r.pause_reason {
        line.push_str(&format!(": {why}"));
    }
    line
}

fn describe(r: &RolloutView) -> String {
    let mut pairs = vec![
        ("rollout", format!("{} of ring {}", r.id, r.ring)),
        ("state", r.state.clone()),
        (
            "step",
            format!("{} of {} ({})", r.step, r.steps, r.direction),
        ),
        ("progress", progress_line(r)),
        ("base", format!("version {}", r.base_version)),
        ("moved at once", percent(r.direct_moved_fraction)),
    ];
    if let Some(reason) = &r.reason {
        pairs.push(("reason", reason.clone()));
    }
    if let Some(s) = r.seconds_in_step {
        pairs.push(("in step", format!("{s:.1}s")));
    }
    if let Some(s) = r.eta_seconds {
        pairs.push(("eta", format!("{s:.1}s")));
    }
    let mut out = fields(&pairs);
    out.push('\n');
    out.push_str(&steps_table(&r.plan, None));
    out
}

async fn status(ctx: &Context, a: StatusArgs) -> Result<(), CliError> {
    let id = match a.id {
        Some(id) => id,
        None => {
            let list = ctx.get(&ring_path(&a.ring, "/rollouts")).await?;
            list["rollouts"][0]["id"]
                .as_u64()
                .ok_or_else(|| CliError::Refused(format!("ring {} has no rollout", a.ring)))?
        }
    };
    let path = ring_path(&a.ring, &format!("/rollouts/{id}"));
    if !a.watch {
        let answer = ctx.get(&path).await?;
        if ctx.json() {
            return emit_json(&answer);
        }
        return emit(&describe(&decode("rollout", &answer)?));
    }
    let mut last = String::new();
    loop {
        let answer = ctx.get(&path).await?;
        let r: RolloutView = decode("rollout", &answer)?;
        let line = if ctx.json() {
            answer.to_string()
        } else {
            progress_line(&r)
        };
        if line != last {
            emit(&format!("{line}\n"))?;
            last = line;
        }
        match r.state.as_str() {
            "done" => return Ok(()),
            "aborted" => return Err(CliError::Refused(format!("rollout {id} was aborted"))),
            "paused" => {
                return Err(CliError::Refused(format!(
                    "rollout {id} is paused: {}",
                    r.pause_reason.unwrap_or_default()
                )))
            }
            _ => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

async fn control(
    ctx: &Context,
    ring: &str,
    id: u64,
    verb: &str,
    body: Value,
) -> Result<(), CliError> {
    let path = ring_path(ring, &format!("/rollouts/{id}/{verb}"));
    let answer = ctx
        .request(Method::POST, &path, Some(&body), &[])
        .await?
        .body;
    if ctx.json() {
        return emit_json(&answer);
    }
    let r: RolloutView = decode("rollout", &answer)?;
    emit(&format!("{}\n", progress_line(&r)))
}
