//! `ringd completions SHELL` and `ringd man`: the shell completions and
//! the man page, generated from the command line's own definition so they
//! cannot drift from it. The packages ship their output.

use std::io::Write;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, CliError};

/// Flags of `ringd completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh or fish.
    #[arg(value_parser = ["bash", "zsh", "fish"])]
    pub shell: String,
}

/// Writes the completion script of `args.shell` to stdout.
pub fn completions(args: &CompletionsArgs) -> Result<(), CliError> {
    let shell = match args.shell.as_str() {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        // clap allows only the three.
        _ => Shell::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ringd", &mut out);
    write_out(&out)
}

/// Writes the man page of `ringd`, as roff, to stdout: the synopsis,
/// the global options and the list of subcommands, then a section per
/// subcommand with its own options, so `ringd serve`'s settings are in it.
pub fn man_page() -> Result<(), CliError> {
    let command = Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut out)
        .map_err(CliError::Output)?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        // Subcommand names are the fixed ASCII words of this file's enum,
        // so they go into the roff header as they are.
        writeln!(out, ".SH \"RINGD {}\"", sub.get_name().to_uppercase())
            .map_err(CliError::Output)?;
        let page = clap_mangen::Man::new(sub.clone());
        page.render_description_section(&mut out)
            .and_then(|()| page.render_options_section(&mut out))
            .map_err(CliError::Output)?;
    }
    write_out(&out)
}

fn write_out(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(CliError::Output)
}
