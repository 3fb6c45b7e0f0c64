//! A Server-Sent Events decoder: bytes in, events out.
//!
//! Follows the WHATWG event-stream rules that ringd's watch stream uses:
//! `field: value` lines, an event ends at a blank line, `data` lines are
//! joined with `\n`, lines starting with `:` are comments, and CRLF, CR or
//! LF end a line.

/// One decoded event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field (`message` when absent).
    pub event: String,
    /// The `id:` field, if the event had one.
    pub id: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental decoder; feed it chunks as they arrive.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of an unfinished line.
    line: Vec<u8>,
    /// The previous chunk ended in CR, so a leading LF belongs to it.
    after_cr: bool,
    event: Option<String>,
    id: Option<String>,
    data: Option<String>,
}

/// Longest line accepted; a snapshot of a 10,000-node ring is a few MB.
const MAX_LINE: usize = 64 << 20;

/// The stream broke the format (a line over the limit or invalid UTF-8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed event stream: {0}")]
pub struct SseError(pub String);

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `chunk`, appending every event it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..pos]);
            let cr = rest[pos] == b'\r';
            rest = &rest[pos + 1..];
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    _ => {}
                }
            }
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, out)?;
        }
        self.line.extend_from_slice(rest);
        if self.line.len() > MAX_LINE {
            return Err(SseError(format!("a line is over {MAX_LINE} bytes")));
        }
        Ok(())
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent {
                    event: self.event.take().unwrap_or_else(|| "message".into()),
                    id: self.id.take(),
                    data,
                });
            } else {
                self.event = None;
            }
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|e| SseError(e.to_string()))?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &[u8], piece: usize) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for chunk in input.chunks(piece) {
            d.feed(chunk, &mut out).unwrap();
        }
        out
    }

    #[test]
    fn events_survive_any_chunking_and_line_ending() {
        let input = b": hello\r\nevent: snapshot\r\nid: 7\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nevent: keepalive\rdata: x\r\rdata:y\n\n";
        let expected = vec![
            SseEvent {
                event: "snapshot".into(),
                id: Some("7".into()),
                data: "{\"a\":\n1}".into(),
            },
            SseEvent {
                event: "keepalive".into(),
                id: None,
                data: "x".into(),
            },
            SseEvent {
                event: "message".into(),
                id: None,
                data: "y".into(),
            },
        ];
        for piece in [1, 2, 3, 7, input.len()] {
            assert_eq!(decode_in_pieces(input, piece), expected, "piece {piece}");
        }
    }

    #[test]
    fn an_event_without_data_is_dropped_and_an_unfinished_one_is_held() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(b"event: nothing\n\nevent: later\ndata: 1\n", &mut out)
            .unwrap();
        assert!(out.is_empty());
        d.feed(b"\n", &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].event, "later");
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let mut d = SseDecoder::new();
        let err = d.feed(b"data: \xff\n", &mut Vec::new()).unwrap_err();
        assert!(err.0.contains("invalid utf-8"), "{err}");
    }
}
