//! Rendering: aligned tables, share bars, percentages, timestamps, JSON
//! for scripts, and error messages.
//!
//! Everything printed that came from a server (or from the store behind
//! it) goes through [`escape`]: versions stored before the API refused
//! control characters, or written around it, may hold escape sequences
//! that would otherwise set the terminal's title, clear it or forge
//! lines. Tables and field lists escape their cells themselves.

use std::io::Write;

use serde_json::Value;
use time::OffsetDateTime;
use unicode_width::UnicodeWidthStr;

use crate::ring::{escape_refused, is_refused_char};

use super::CliError;
use crate::client::ClientError;
use crate::wire::DiffView;

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers, so their digits line up.
    Right,
}

/// A table with a header row; columns are two spaces apart and lines carry
/// no trailing spaces.
#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        Self {
            header: columns.iter().map(|(h, _)| (*h).to_owned()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells are empty); each cell is escaped.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows
            .push(cells.into_iter().map(|c| escape(&c)).collect());
    }

    /// The table as text, one line per row, ending with a newline.
    /// Columns are as wide as their widest cell on a terminal: CJK and
    /// most emoji take two columns each.
    pub fn render(&self) -> String {
        let width = |s: &str| s.width();
        let mut widths: Vec<usize> = self.header.iter().map(|h| width(h)).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(widths.len()) {
                widths[i] = widths[i].max(width(cell));
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, w) in widths.iter().enumerate() {
                let cell = row.get(i).map_or("", String::as_str);
                let pad = " ".repeat(w - width(cell));
                if i > 0 {
                    line.push_str("  ");
                }
                match self.align[i] {
                    Align::Left => {
                        line.push_str(cell);
                        line.push_str(&pad);
                    }
                    Align::Right => {
                        line.push_str(&pad);
                        line.push_str(cell);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `name  value` lines with the values aligned (and escaped), for one
/// object.
pub fn fields(pairs: &[(&str, String)]) -> String {
    let w = pairs.iter().map(|(k, _)| k.width()).max().unwrap_or(0);
    let mut out = String::new();
    for (k, v) in pairs {
        let pad = " ".repeat(w - k.width());
        let line = format!("{k}{pad}  {}", escape(v));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `text` safe to print on a terminal: control characters, line
/// separators and bidirectional formatting characters (the ones the API
/// refuses, see [`crate::ring::is_refused_char`]) written as `\n`, `\t`,
/// `\r` or `\u{…}`. Every other character is kept, so names and reasons
/// in any script read as they are. Applying it twice changes nothing more.
pub fn escape(text: &str) -> String {
    escape_refused(text)
}

/// JSON text safe to print on a terminal: every refused character left
/// raw by serde_json (it escapes only U+0000–U+001F, not DEL, the C1
/// controls or the bidirectional ones) written as a `\uXXXX` escape,
/// which JSON parsers read back as the same character. Refused characters
/// all lie in the Basic Multilingual Plane, so one escape each suffices.
/// Newlines are left alone: inside strings serde_json already escapes
/// them, so any raw one is the pretty printer's own.
fn json_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c != '\n' && is_refused_char(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A share of the keyspace as a percentage with two decimals.
pub fn percent(share: f64) -> String {
    format!("{:.2}%", share * 100.0)
}

/// Cells of a share bar at 100%.
pub const BAR_WIDTH: usize = 40;

/// A bar of `share` (0–1) on a scale of [`BAR_WIDTH`] cells, drawn in
/// eighths of a cell and rounded to the nearest eighth, so equal shares
/// always draw the same bar.
pub fn share_bar(share: f64) -> String {
    const PARTIAL: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (share.clamp(0.0, 1.0) * (BAR_WIDTH * 8) as f64).round() as usize;
    let mut bar = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        bar.push(PARTIAL[eighths % 8]);
    }
    bar
}

/// `yes` or `no`.
pub fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_owned()
}

/// An RFC 3339 timestamp shortened to whole seconds in UTC, so table
/// columns keep one width whatever the fraction; unparsable text is shown
/// as it is.
pub fn time(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// A node or owner that may be absent (`null` means no owner), escaped.
pub fn or_none(id: Option<&str>) -> String {
    escape(id.unwrap_or("(none)"))
}

/// Writes `text` to stdout and flushes it.
pub fn emit(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CliError::Output)
}

/// Prints `value` as pretty JSON (keys sorted, as serde_json orders maps).
pub fn emit_json(value: &Value) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    emit(&format!("{}\n", json_safe(&text)))
}

/// Prints `value` as one compact JSON line, for streams.
pub fn emit_json_line(value: &Value) -> Result<(), CliError> {
    let text = serde_json::to_string(value).unwrap_or_default();
    emit(&format!("{}\n", json_safe(&text)))
}

/// The error as printed on stderr: `error: <what>`, then for a problem
/// document its type and status, the field it blames and the ring's
/// current version when the server named them; escaped, since a server's
/// message may echo what it refused.
pub fn error_text(err: &CliError) -> String {
    let mut out = String::new();
    match err {
        CliError::Client(ClientError::Problem(p)) | CliError::Usage(ClientError::Problem(p)) => {
            let detail = if p.detail.is_empty() {
                &p.title
            } else {
                &p.detail
            };
            out.push_str(&format!("error: {}\n", escape(detail)));
            out.push_str(&format!(
                "  problem: {} (HTTP {})\n",
                escape(&p.type_uri),
                p.status
            ));
            if let Some(field) = &p.field {
                out.push_str(&format!("  field: {}\n", escape(field)));
            }
            if let Some(v) = p.current_version {
                out.push_str(&format!("  current version: {v}\n"));
            }
        }
        CliError::Client(ClientError::Unreachable { urls, last }) => {
            out.push_str(&format!(
                "error: no ringd server reachable at {}\n",
                escape(urls)
            ));
            out.push_str(&format!("  last attempt: {}\n", escape(last)));
        }
        // A reader that closed the pipe (`ringd … | head`) wants no more.
        CliError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => out.push_str(&format!("error: {}\n", escape(&other.to_string()))),
    }
    out
}

/// Prints [`error_text`] to stderr.
pub fn print_error(err: &CliError) {
    let _ = std::io::stderr()
        .lock()
        .write_all(error_text(err).as_bytes());
}

/// The movement of a diff: moved fraction, per-node gain and loss, and
/// the transfers between nodes.
pub fn movement(d: &DiffView) -> String {
    let ranges = match d.moved_ranges_total {
        1 => "1 moved range".to_owned(),
        n => format!("{n} moved ranges"),
    };
    let mut out = format!(
        "moved {} of the keyspace (basis: {}, {ranges})\n\n",
        percent(d.moved_fraction),
        escape(d.basis.as_str()),
    );
    // A table's slots and copies are what a migration has to do.
    if let (Some(slots), Some(copies)) = (d.table_moves_total, d.replicas_moved) {
        out.push_str(&format!(
            "{slots} replica slots change node; {copies} replicas are copied to a node without one\n\n"
        ));
    }
    let mut nodes = Table::new(&[
        ("NODE", Align::Left),
        ("BEFORE", Align::Right),
        ("AFTER", Align::Right),
        ("GAINED", Align::Right),
        ("LOST", Align::Right),
    ]);
    for n in &d.nodes {
        nodes.row(vec![
            n.id.clone(),
            percent(n.before),
            percent(n.after),
            percent(n.gained),
            percent(n.lost),
        ]);
    }
    out.push_str(&nodes.render());
    out.push('\n');
    if d.transfers.is_empty() {
        out.push_str("no transfers\n");
        return out;
    }
    let mut transfers = Table::new(&[
        ("FROM", Align::Left),
        ("TO", Align::Left),
        ("SHARE", Align::Right),
    ]);
    for t in &d.transfers {
        transfers.row(vec![
            or_none(t.from.as_deref()),
            or_none(t.to.as_deref()),
            percent(t.fraction),
        ]);
    }
    out.push_str(&transfers.render());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_diff_counts_its_slots_and_copies() {
        let d: DiffView = serde_json::from_value(serde_json::json!({
            "basis": "partitions", "moved_fraction": 0.25, "nodes": [], "transfers": [],
            "moved_ranges": [], "moved_ranges_total": 3, "moved_ranges_truncated": false,
            "table_moves": [], "table_moves_total": 70, "table_moves_truncated": false,
            "replicas_moved": 64
        }))
        .unwrap();
        assert_eq!(
            movement(&d),
            "moved 25.00% of the keyspace (basis: partitions, 3 moved ranges)\n\n\
             70 replica slots change node; 64 replicas are copied to a node without one\n\n\
             NODE  BEFORE  AFTER  GAINED  LOST\n\nno transfers\n"
        );
    }

    #[test]
    fn tables_align_and_trim() {
        let mut t = Table::new(&[
            ("NODE", Align::Left),
            ("SHARE", Align::Right),
            ("X", Align::Left),
        ]);
        t.row(vec!["a".into(), "5.00%".into(), String::new()]);
        t.row(vec!["long-name".into(), "100.00%".into(), "z".into()]);
        assert_eq!(
            t.render(),
            "NODE         SHARE  X\na            5.00%\nlong-name  100.00%  z\n"
        );
    }

    #[test]
    fn cells_are_escaped_and_measured_in_display_columns() {
        let mut t = Table::new(&[("K", Align::Left), ("V", Align::Left)]);
        t.row(vec!["数据".into(), "x".into()]);
        t.row(vec!["a\u{1b}[2J".into(), "y\nz".into()]);
        assert_eq!(
            t.render(),
            "K           V\n数据        x\na\\u{1b}[2J  y\\nz\n"
        );
        assert_eq!(fields(&[("k", "\u{202e}x".into())]), "k  \\u{202e}x\n");
    }

    #[test]
    fn json_output_escapes_what_serde_leaves_raw() {
        let value = serde_json::json!({"r": "a\u{7f}\u{9b}\u{202e}\u{2028}\u{1b}\n中"});
        let text = json_safe(&serde_json::to_string_pretty(&value).unwrap());
        assert_eq!(
            text,
            "{\n  \"r\": \"a\\u007f\\u009b\\u202e\\u2028\\u001b\\n中\"\n}"
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    }

    #[test]
    fn bars_round_to_eighths() {
        assert_eq!(share_bar(0.0), "");
        assert_eq!(share_bar(1.0), "█".repeat(40));
        assert_eq!(share_bar(0.5), "█".repeat(20));
        assert_eq!(share_bar(1.0 / 3.0), format!("{}▍", "█".repeat(13)));
        assert_eq!(share_bar(2.0), "█".repeat(40));
    }

    #[test]
    fn times_are_shortened_to_seconds_in_utc() {
        let at = |text: &str| {
            OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap()
        };
        assert_eq!(
            time(at("2026-11-30T15:38:13.123456789Z")),
            "2026-11-30T15:38:13Z"
        );
        assert_eq!(
            time(at("2026-11-30T16:38:13+01:00")),
            "2026-11-30T15:38:13Z"
        );
    }
}
