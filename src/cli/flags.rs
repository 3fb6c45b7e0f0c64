//! Parsers of flag values that several subcommands take.

/// Parses `KEY=VALUE` (the value may be empty or contain `=`), as
/// `--label` takes it.
pub(super) fn parse_label(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("`{text}` is not KEY=VALUE")),
    }
}
