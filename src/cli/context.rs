//! What every client command shares: the servers, the output format and
//! the requests they make.

use std::path::Path;
use std::time::Duration;

use reqwest::{Method, Response, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::{CliError, ClientArgs, OutputFormat};
use crate::client::{ClientBuilder, ClientError, Endpoints, RingClient, TlsSettings};

/// The servers to ask and how to print the answers.
#[derive(Debug, Clone)]
pub struct Context {
    /// The servers, with the token and failover between them.
    pub endpoints: Endpoints,
    /// Table or JSON.
    pub format: OutputFormat,
    /// What [`Context::ring_client`] needs besides the URLs: the client
    /// library builds its own connection pool, so `ringd follow` reaches
    /// the servers exactly as an application configured with these flags.
    token: Option<String>,
    tls: TlsSettings,
}

/// A decoded answer: its status, its version (from the ETag, when the
/// route sends one) and its JSON body (`null` when there is none).
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: StatusCode,
    /// The ring version named by `ETag: "<version>"`.
    pub version: Option<u64>,
    /// The body.
    pub body: Value,
}

impl Context {
    /// A context for the global flags.
    pub fn new(args: &ClientArgs) -> Result<Self, CliError> {
        let tls = tls_settings(args)?;
        let endpoints = Endpoints::builder(&[&args.addr])
            .token(args.token.clone())
            .tls(tls.clone())
            .build()?;
        Ok(Self {
            endpoints,
            format: args.output,
            token: args.token.clone(),
            tls,
        })
    }

    /// A [`RingClient`] of `ring` on the same servers, token and TLS
    /// settings as every other request of this command.
    pub fn ring_client(&self, ring: &str) -> ClientBuilder {
        let builder = RingClient::builder(self.endpoints.urls(), ring).tls(self.tls.clone());
        match &self.token {
            Some(token) => builder.token(token.clone()),
            None => builder,
        }
    }

    /// Whether JSON was asked for.
    pub fn json(&self) -> bool {
        self.format == OutputFormat::Json
    }

    /// Sends a request and decodes the JSON answer (2xx only; errors
    /// become [`CliError::Client`] with the server's problem document).
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<Answer, CliError> {
        let (resp, url) = self
            .endpoints
            .send(method, path, body, headers, None)
            .await?;
        let status = resp.status();
        let version = etag_version(&resp);
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| ClientError::decode(format!("{url}{path}"), e))?;
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .map_err(|e| ClientError::decode(format!("{url}{path}"), e))?
        };
        Ok(Answer {
            status,
            version,
            body,
        })
    }

    /// `GET path` as JSON.
    pub async fn get(&self, path: &str) -> Result<Value, CliError> {
        Ok(self.request(Method::GET, path, None, &[]).await?.body)
    }

    /// `GET path` as text, with its `ETag` (2xx only, as [`Context::request`]).
    pub async fn get_text(&self, path: &str) -> Result<(String, Option<String>), CliError> {
        let (resp, url) = self
            .endpoints
            .send(Method::GET, path, None, &[], None)
            .await?;
        let tag = resp
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = resp
            .text()
            .await
            .map_err(|e| ClientError::decode(format!("{url}{path}"), e))?;
        Ok((text, tag))
    }

    /// A request with no timeout, for streams; returns the open response.
    pub async fn stream(
        &self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Result<(Response, String), CliError> {
        Ok(self
            .endpoints
            .send(Method::GET, path, None, headers, Some(Duration::ZERO))
            .await?)
    }
}

/// `--ca-cert`, and `--client-cert` with `--client-key`, read from disk.
fn tls_settings(args: &ClientArgs) -> Result<TlsSettings, CliError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|source| CliError::Read {
            path: path.to_owned(),
            source,
        })
    };
    let mut tls = TlsSettings::default();
    if let Some(ca) = &args.ca_cert {
        tls = tls.ca_cert_pem(read(ca)?);
    }
    if let (Some(cert), Some(key)) = (&args.client_cert, &args.client_key) {
        let mut pem = read(cert)?;
        pem.push(b'\n');
        pem.extend(read(key)?);
        tls = tls.identity_pem(pem);
    }
    Ok(tls)
}

fn etag_version(resp: &Response) -> Option<u64> {
    let tag = resp.headers().get(reqwest::header::ETAG)?.to_str().ok()?;
    crate::wire::headers::etag_version(tag)
}

/// Decodes the parts of an answer a command renders; the whole answer is
/// what `--output json` prints.
pub(super) fn decode<T: DeserializeOwned>(what: &str, value: &Value) -> Result<T, CliError> {
    T::deserialize(value).map_err(|e| CliError::decode(what, e))
}

/// A request body as JSON, from its wire type.
pub(super) fn to_body<T: Serialize>(input: &T) -> Value {
    // Serializing plain data into memory cannot fail.
    serde_json::to_value(input).unwrap_or_default()
}

/// Percent-encodes one path segment or query value: everything but
/// RFC 3986's unreserved characters, so a `/`, `?` or `&` in a name or key
/// reaches the server as data instead of changing the URL.
pub(super) fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `/v1/rings/{ring}` plus `rest`.
pub(super) fn ring_path(ring: &str, rest: &str) -> String {
    format!("/v1/rings/{}{rest}", encode(ring))
}

/// A key for idempotent commits: unique per invocation (time and process
/// id), so a retry inside this invocation is recognised by the server and
/// any other invocation is a new change.
pub(super) fn idempotency_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("ringd-cli-{nanos:x}-{:x}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_characters_are_encoded() {
        assert_eq!(encode("user:1 2/3?&é"), "user%3A1%202%2F3%3F%26%C3%A9");
        assert_eq!(encode("cache-1.a_b~"), "cache-1.a_b~");
        assert_eq!(ring_path("a/b", "/nodes"), "/v1/rings/a%2Fb/nodes");
    }

    #[test]
    fn idempotency_keys_are_valid_header_text() {
        let k = idempotency_key();
        assert!(
            k.len() <= 255 && k.bytes().all(|b| b.is_ascii_graphic()),
            "{k}"
        );
    }
}
