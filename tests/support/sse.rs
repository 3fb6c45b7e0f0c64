//! Test harness: reading a Server-Sent Events stream event by event.

use std::time::Duration;

use serde_json::Value;

/// One event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    /// `event:` field.
    pub event: String,
    /// `id:` field, if any.
    pub id: Option<u64>,
    /// `data:` parsed as JSON.
    pub data: Value,
}

/// An open event stream.
pub(crate) struct EventStream {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl EventStream {
    /// Opens `url` (a watch URL), asserting 200 and `text/event-stream`.
    pub(crate) async fn open(url: &str, last_event_id: Option<u64>) -> Self {
        let mut request = reqwest::Client::new().get(url);
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = request.send().await.expect("watch request");
        Self::from_response(response)
    }

    /// The stream of a watch request sent by the caller (with a token, say),
    /// asserting 200 and `text/event-stream`.
    pub(crate) fn from_response(response: reqwest::Response) -> Self {
        let url = response.url().clone();
        assert_eq!(response.status(), 200, "watch {url}");
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream",
            "watch {url}"
        );
        Self {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next event; panics if none arrives within `limit`.
    pub(crate) async fn next_within(&mut self, limit: Duration) -> Event {
        tokio::time::timeout(limit, self.next())
            .await
            .unwrap_or_else(|_| panic!("no event within {limit:?}"))
            .expect("the stream ended")
    }

    /// The next event within 5 s.
    pub(crate) async fn next_event(&mut self) -> Event {
        self.next_within(Duration::from_secs(5)).await
    }

    /// Whether an event arrives within `limit` (consuming it if so).
    pub(crate) async fn quiet_for(&mut self, limit: Duration) -> Option<Event> {
        tokio::time::timeout(limit, self.next())
            .await
            .ok()
            .flatten()
    }

    /// The next event, or `None` when the stream ends.
    pub(crate) async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = find(&self.buffer, b"\n\n") {
                let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
                // A block of comments only (`: keepalive`) is no event.
                if let Some(event) = parse(&block) {
                    return Some(event);
                }
                continue;
            }
            match self.response.chunk().await.expect("read the stream") {
                Some(chunk) => self.buffer.extend_from_slice(&chunk),
                None => return None,
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn parse(block: &[u8]) -> Option<Event> {
    let text = std::str::from_utf8(block).expect("UTF-8 event");
    let mut lines = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(':'))
        .peekable();
    lines.peek()?;
    let mut event = Event {
        event: "message".into(),
        id: None,
        data: Value::Null,
    };
    for line in lines {
        let (field, value) = line.split_once(": ").unwrap_or((line, ""));
        match field {
            "event" => event.event = value.to_owned(),
            "id" => event.id = Some(value.parse().expect("numeric id")),
            "data" => event.data = serde_json::from_str(value).expect("JSON data"),
            other => panic!("unexpected field {other:?} in {text:?}"),
        }
    }
    Some(event)
}
