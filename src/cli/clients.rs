//! `ringd clients RING`: which clients applied which version, and which
//! computed a different placement than the server.

use clap::Args;

use super::context::{decode, ring_path};
use super::output::{emit, emit_json, escape, percent, time, yes_no, Align, Table};
use super::{CliError, Context};
use crate::wire::ClientList;

/// `ringd clients RING`.
#[derive(Debug, Args)]
pub struct ClientsArgs {
    /// The ring.
    pub ring: String,
}

/// Prints the ring's live clients and the convergence summary.
pub async fn run(ctx: &Context, a: ClientsArgs) -> Result<(), CliError> {
    let body = ctx.get(&ring_path(&a.ring, "/clients")).await?;
    if ctx.json() {
        return emit_json(&body);
    }
    let list: ClientList = decode("client list", &body)?;
    let mut t = Table::new(&[
        ("CLIENT", Align::Left),
        ("KIND", Align::Left),
        ("VERSION", Align::Right),
        ("LAG", Align::Right),
        ("ON LATEST", Align::Left),
        ("DIVERGENT", Align::Left),
        ("LAST SEEN", Align::Left),
    ]);
    for c in &list.clients {
        // A pruned version cannot be checked: say so rather than "no".
        let divergent = match c.matches {
            None => "unknown".to_owned(),
            Some(_) => yes_no(c.divergent),
        };
        t.row(vec![
            c.client_id.clone(),
            c.kind.name().to_owned(),
            c.version.to_string(),
            c.lag.to_string(),
            yes_no(c.on_latest),
            divergent,
            time(c.last_seen),
        ]);
    }
    let s = &list.summary;
    let ring = escape(&list.ring);
    if s.clients == 0 {
        return emit(&format!(
            "ring {ring} at version {}: no live clients (none has acked within the server's client TTL)\n",
            list.version
        ));
    }
    let share = s.on_latest_share.map_or_else(|| "-".to_owned(), percent);
    let failing = if s.failing == 0 {
        String::new()
    } else {
        format!(", {} failing", s.failing)
    };
    emit(&format!(
        "ring {ring} at version {}\n\n{}\n{} clients, {} on the latest version ({share}), {} divergent{failing}\n{}",
        list.version,
        t.render(),
        s.clients,
        s.on_latest,
        s.divergent,
        failures(&list)
    ))
}

/// Each failing client's report: the version it could not apply and the
/// message of the program that refused it, one escaped line each (the
/// text comes from another program, and may hold anything).
fn failures(list: &ClientList) -> String {
    let mut out = String::new();
    for c in &list.clients {
        let Some(f) = &c.failure else { continue };
        out.push_str(&format!(
            "\n{} could not apply version {}; it stays on version {}:\n",
            escape(&c.client_id),
            f.version,
            c.version
        ));
        for line in f.error.lines() {
            out.push_str(&format!("    {}\n", escape(line)));
        }
    }
    out
}
