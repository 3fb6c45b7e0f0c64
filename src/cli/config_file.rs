//! `ringd serve --config FILE`: `serve`'s settings in a TOML file, one key
//! per flag, spelled as the flag is without its dashes:
//!
//! ```toml
//! listen = "0.0.0.0:7420"
//! store = "sqlite:///var/lib/ringd/ringd.db"
//! watch-keepalive = "15s"
//! insecure = false
//! ```
//!
//! A setting given on the command line or in its `RINGD_*` variable wins
//! over the file, and the file over the default, as with Consul's and
//! kubelet's files. The file's values go through the flags' own parsers:
//! each is appended to the command line as `--key=value` and the whole
//! line parsed again, so a value is checked once, by the same code,
//! wherever it comes from.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, CommandFactory, FromArgMatches};
use thiserror::Error;

use super::Cli;

/// Why the configuration file could not be used. Each is one line naming
/// the file, for the journal.
#[derive(Debug, Error)]
pub enum ConfigFileError {
    /// The file could not be read.
    #[error("cannot read the configuration file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not TOML.
    #[error("the configuration file {} is not valid TOML: {}", path.display(), one_line(reason))]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        reason: String,
    },
    /// A key, or a value's type, that no flag of `ringd serve` takes.
    #[error("the configuration file {}: {reason}", path.display())]
    Setting {
        /// The file.
        path: PathBuf,
        /// Which key, and what it should be.
        reason: String,
    },
}

/// Parses the command line, with the settings of `serve --config FILE`
/// filled in. A usage error on the command line itself is clap's, printed
/// and exited on by the caller as usual.
pub fn parse_from<I, T>(args: I) -> Result<Cli, Failure>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let mut command = Cli::command();
    let matches = command.try_get_matches_from_mut(&args)?;
    let Some(("serve", serve)) = matches.subcommand() else {
        return Ok(Cli::from_arg_matches(&matches)?);
    };
    let Some(path) = serve.get_one::<PathBuf>("config").cloned() else {
        return Ok(Cli::from_arg_matches(&matches)?);
    };
    let settings = file_settings(&command, serve, &path)?;
    if settings.is_empty() {
        return Ok(Cli::from_arg_matches(&matches)?);
    }
    args.extend(settings.into_iter().map(OsString::from));
    // Only the file's values are new, so an error now is the file's.
    let matches =
        command
            .try_get_matches_from_mut(&args)
            .map_err(|e| ConfigFileError::Setting {
                path: path.clone(),
                reason: clap_reason(&e),
            })?;
    Ok(Cli::from_arg_matches(&matches)?)
}

/// What stops the command line from parsing.
#[derive(Debug, Error)]
pub enum Failure {
    /// The command line itself: clap prints it, with usage, and exits 2.
    #[error(transparent)]
    Usage(#[from] clap::Error),
    /// The configuration file.
    #[error(transparent)]
    File(#[from] ConfigFileError),
}

/// The file's settings as `--key=value` arguments, leaving out those the
/// command line or the environment already set.
fn file_settings(
    command: &clap::Command,
    serve: &ArgMatches,
    path: &Path,
) -> Result<Vec<String>, ConfigFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigFileError::Read {
        path: path.to_owned(),
        source,
    })?;
    let table: toml::Table =
        text.parse()
            .map_err(|e: toml::de::Error| ConfigFileError::Syntax {
                path: path.to_owned(),
                reason: e.message().to_owned(),
            })?;
    let setting = |reason: String| ConfigFileError::Setting {
        path: path.to_owned(),
        reason,
    };
    let serve_command = command
        .find_subcommand("serve")
        .expect("the command line has a serve subcommand");
    let mut settings = Vec::new();
    for (key, value) in &table {
        let arg = serve_command
            .get_arguments()
            .find(|a| a.get_long() == Some(key.as_str()) && is_setting(a))
            .ok_or_else(|| {
                setting(format!(
                    "unknown setting `{}`; the settings are the flags of `ringd serve --help` without their dashes",
                    key.escape_debug()
                ))
            })?;
        let given = matches!(
            serve.value_source(arg.get_id().as_str()),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        );
        let flag = matches!(arg.get_action(), ArgAction::SetTrue);
        let text = match value {
            toml::Value::Boolean(on) if flag => on.then(|| format!("--{key}")),
            _ if flag => return Err(setting(format!("`{key}` must be true or false"))),
            toml::Value::String(s) => Some(format!("--{key}={s}")),
            toml::Value::Integer(n) => Some(format!("--{key}={n}")),
            _ => return Err(setting(format!("`{key}` must be a string"))),
        };
        if let Some(text) = text.filter(|_| !given) {
            settings.push(text);
        }
    }
    Ok(settings)
}

/// Whether a flag of `serve` may be set from the file: every one but
/// `--config` itself, `--help` and `--version`.
fn is_setting(arg: &clap::Arg) -> bool {
    arg.get_id() != "config" && !matches!(arg.get_action(), ArgAction::Help | ArgAction::Version)
}

/// clap's message without its `error: ` prefix and usage lines.
fn clap_reason(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_owned()
}

/// The first line of a message, so the error stays one line.
fn one_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Command;
    use crate::server::ServeConfig;

    /// Parses `ringd serve` with `args` and a configuration file holding
    /// `toml`, in the environment clap sees (no `RINGD_*` is set in tests
    /// but those named in `env`, which these tests do not touch).
    fn serve_with(toml: &str, args: &[&str]) -> Result<ServeConfig, Failure> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ringd.toml");
        std::fs::write(&path, toml).unwrap();
        let mut line = vec!["ringd".to_owned(), "serve".to_owned()];
        line.push(format!("--config={}", path.display()));
        line.extend(args.iter().map(|a| (*a).to_owned()));
        let cli = parse_from(line)?;
        let Command::Serve(a) = cli.command else {
            panic!("not serve");
        };
        Ok(ServeConfig::from(a))
    }

    fn file_error(toml: &str) -> String {
        match serve_with(toml, &[]) {
            Err(Failure::File(e)) => e.to_string(),
            other => panic!("expected a file error, got {other:?}"),
        }
    }

    #[test]
    fn the_file_sets_what_the_command_line_does_not() {
        let c = serve_with(
            "listen = \"127.0.0.1:7777\"\nstore = \"sqlite:///tmp/x.db\"\nretention = 7\nwatch-keepalive = \"20s\"\ninsecure = true\n",
            &[],
        )
        .unwrap();
        assert_eq!(c.listen, "127.0.0.1:7777");
        assert_eq!(c.store_url, "sqlite:///tmp/x.db");
        assert_eq!(c.retention, 7);
        assert_eq!(c.settings.keepalive, std::time::Duration::from_secs(20));
        assert!(c.insecure);
    }

    #[test]
    fn the_command_line_wins_over_the_file() {
        let c = serve_with(
            "listen = \"127.0.0.1:7777\"\nretention = 7\n",
            &["--listen", "127.0.0.1:8888"],
        )
        .unwrap();
        assert_eq!(c.listen, "127.0.0.1:8888");
        assert_eq!(c.retention, 7);
    }

    #[test]
    fn false_leaves_a_switch_off_and_an_empty_file_changes_nothing() {
        let c = serve_with("insecure = false\n", &[]).unwrap();
        assert!(!c.insecure);
        let c = serve_with("", &[]).unwrap();
        assert_eq!(c.listen, crate::server::DEFAULT_LISTEN);
    }

    #[test]
    fn a_value_goes_through_the_flags_parser() {
        let e = file_error("watch-keepalive = \"1h\"\n");
        assert!(e.starts_with("the configuration file "), "{e}");
        assert!(e.contains("--watch-keepalive"), "{e}");
        assert!(!e.contains('\n'), "one line: {e:?}");
        let e = file_error("max-watchers = 0\n");
        assert!(e.contains("--max-watchers"), "{e}");
    }

    #[test]
    fn unknown_keys_wrong_types_and_bad_toml_are_refused() {
        let e = file_error("lisen = \"127.0.0.1:1\"\n");
        assert!(e.ends_with("unknown setting `lisen`; the settings are the flags of `ringd serve --help` without their dashes"), "{e}");
        assert!(file_error("config = \"/etc/x\"\n").contains("unknown setting `config`"));
        assert!(file_error("help = true\n").contains("unknown setting `help`"));
        assert!(file_error("insecure = \"yes\"\n").ends_with("`insecure` must be true or false"));
        assert!(file_error("listen = [\"a\"]\n").ends_with("`listen` must be a string"));
        let e = file_error("listen = \n");
        assert!(e.contains("is not valid TOML: "), "{e}");
        assert!(!e.contains('\n'), "one line: {e:?}");
    }

    #[test]
    fn a_key_that_is_not_text_is_escaped() {
        let e = file_error("\"a\\u001b[31m\" = 1\n");
        assert!(e.contains("unknown setting `a\\u{1b}[31m`"), "{e}");
    }

    #[test]
    fn an_unreadable_file_names_itself() {
        let line = ["ringd", "serve", "--config", "/nonexistent/ringd.toml"];
        match parse_from(line) {
            Err(Failure::File(e)) => assert_eq!(
                e.to_string(),
                "cannot read the configuration file /nonexistent/ringd.toml: No such file or directory (os error 2)"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn other_commands_ignore_it() {
        let cli = parse_from(["ringd", "ring", "list"]).unwrap();
        assert!(matches!(cli.command, Command::Ring(_)));
    }
}
