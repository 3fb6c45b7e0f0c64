//! Free text that people read: change reasons, node addresses, label
//! values, hash keys. It ends up on operators' terminals (`ringd history`,
//! `ringd watch`, `ringd node list`) and in log viewers and web pages, so
//! the characters that make those act instead of show are refused.

use std::fmt;

/// Whether `c` is refused in free text.
///
/// - General category Cc: C0 controls (ESC starts the terminal sequences
///   that set titles, clear screens and move the cursor; CR and LF forge
///   lines), DEL, and the C1 controls (U+009B is a one-character CSI on
///   terminals that honour C1).
/// - U+2028 and U+2029 (categories Zl and Zp): line and paragraph breaks
///   for many viewers and JavaScript, so they forge lines too.
/// - The Unicode `Bidi_Control` characters (U+061C, U+200E, U+200F,
///   U+202A–U+202E, U+2066–U+2069): embeddings, overrides and isolates
///   make text display in a different order than it is stored, so a
///   reason or label can show something other than what it says (the
///   "Trojan Source" attack).
///
/// The other format characters (category Cf) stay allowed: ZERO WIDTH
/// JOINER builds emoji sequences, ZERO WIDTH NON-JOINER is part of
/// Persian and Indic spelling, and none of them moves the cursor, breaks
/// a line or reorders the text around it.
pub fn is_refused_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// A refused character in a piece of free text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefusedChar {
    /// The character.
    pub char: char,
    /// Its byte offset in the text.
    pub offset: usize,
}

impl RefusedChar {
    /// The first refused character of `text`, if any.
    pub fn find(text: &str) -> Option<Self> {
        text.char_indices()
            .find(|(_, c)| is_refused_char(*c))
            .map(|(offset, char)| Self { char, offset })
    }

    fn kind(self) -> &'static str {
        match self.char {
            c if c.is_control() => "a control character",
            '\u{2028}' | '\u{2029}' => "a line or paragraph separator",
            _ => "a bidirectional formatting character",
        }
    }
}

impl fmt::Display for RefusedChar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "U+{:04X} ({}) at byte {}",
            self.char as u32,
            self.kind(),
            self.offset
        )
    }
}

/// `text` with every refused character written as `\u{…}` (and CR, LF and
/// tab as `\r`, `\n`, `\t`), so echoing input in a message cannot carry
/// what the message refuses. Other text, backslashes included, is kept.
pub fn escape_refused(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_refused_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_characters() {
        for c in [
            '\0', '\x07', '\x1b', '\n', '\r', '\t', '\x7f', '\u{85}', '\u{9b}', '\u{2028}',
            '\u{2029}', '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202e}', '\u{2066}',
            '\u{2069}',
        ] {
            assert!(is_refused_char(c), "{:?}", c);
        }
        // Printable text of every kind, and the joiners real text needs.
        for c in [
            ' ', 'a', 'é', '中', '😀', '\u{200d}', '\u{200c}', '\u{a0}', '\u{202f}', '\u{2065}',
            '\u{206a}',
        ] {
            assert!(!is_refused_char(c), "{:?}", c);
        }
    }

    #[test]
    fn finds_the_first_and_escapes_all() {
        let text = "ok \u{1b}]0;pwned\u{7}\nnext \u{202e}";
        let found = RefusedChar::find(text).unwrap();
        assert_eq!(
            found,
            RefusedChar {
                char: '\u{1b}',
                offset: 3
            }
        );
        assert_eq!(found.to_string(), "U+001B (a control character) at byte 3");
        assert_eq!(
            escape_refused(text),
            "ok \\u{1b}]0;pwned\\u{7}\\nnext \\u{202e}"
        );
        assert_eq!(
            escape_refused("a\\b 中 👨\u{200d}👩"),
            "a\\b 中 👨\u{200d}👩"
        );
        assert_eq!(RefusedChar::find("plain 中文"), None);
        let bidi = RefusedChar::find("x\u{2066}").unwrap();
        assert_eq!(
            bidi.to_string(),
            "U+2066 (a bidirectional formatting character) at byte 1"
        );
    }
}
