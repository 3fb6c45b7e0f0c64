//! The `ringd` binary: parses the command line, runs it and turns the
//! outcome into an exit code. Everything else lives in the library
//! (`ringd::cli`, `ringd::server`, `ringd::client`).

use std::process::ExitCode;

use ringd::cli::config_file::{self, Failure};
use ringd::cli::{output, run};

// jemalloc leaves the untouched parts of each connection's buffers out of
// the resident set; see the dependency's note in Cargo.toml.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = match config_file::parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        // clap prints usage errors itself and exits with 2.
        Err(Failure::Usage(e)) => e.exit(),
        // One line, for the journal, and 2 as for any usage error (the
        // unit does not restart on it).
        Err(Failure::File(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            output::print_error(&e);
            ExitCode::from(e.exit_code())
        }
    }
}
