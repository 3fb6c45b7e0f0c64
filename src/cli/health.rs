//! `ringd health`: asks a server whether it is alive (`/healthz`) or ready
//! (`/readyz`), for probes that have no curl, such as the container
//! image's `HEALTHCHECK`: exit code 0 when it is, 1 when it answered
//! otherwise, 3 when nothing answered.

use clap::Args;

use super::output::{emit, emit_json, escape};
use super::{CliError, Context};

/// `ringd health`.
#[derive(Debug, Args)]
pub struct HealthArgs {
    /// Ask whether it serves (the store answers), not only whether it is up.
    #[arg(long)]
    pub ready: bool,
}

/// Prints the server's status, `ok` or `ready`.
pub async fn run(ctx: &Context, args: HealthArgs) -> Result<(), CliError> {
    let path = if args.ready { "/readyz" } else { "/healthz" };
    let body = ctx.get(path).await?;
    if ctx.json() {
        return emit_json(&body);
    }
    let status = body
        .get("status")
        .and_then(|s| s.as_str())
        .ok_or_else(|| CliError::decode(path, "no status in the answer"))?;
    emit(&format!("{}\n", escape(status)))
}
