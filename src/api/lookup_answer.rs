//! The answers to lookups, written as they are computed.
//!
//! The bodies are the JSON of [`LookupResult`] and [`LookupBatchResult`],
//! byte for byte (the tests compare them for every algorithm), but
//! written without them: each key
//! is placed while its entry is written, and node ids are copied from the
//! placement. Why by hand, measured at 1,000 keys (docs/benchmarks.md,
//! "HTTP service"):
//! - the owned form cost six allocations per key (the echoed key, the
//!   hash's text, the owner, the list and its ids) and a response buffer
//!   that doubled its way up to the body's size; allocation and copying
//!   were a third of the server's CPU;
//! - written through serde, the borrowed form still spent a fifth of the
//!   server's CPU in `serde_json`'s string escaping, eleven strings per
//!   key. Only the key can need escaping: field names are constants, the
//!   hash is digits, base64 has no character JSON escapes, and a node id is
//!   `[A-Za-z0-9._:-]` by construction ([`crate::placement::NodeId`]). So
//!   the key alone goes through `serde_json`.
//!
//! [`LookupResult`]: crate::wire::LookupResult
//! [`LookupBatchResult`]: crate::wire::LookupBatchResult

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

use super::keys::LookupKey;
use crate::placement::Placement;

/// The answer to `POST …/lookup` for `keys` at `version`, `replicas` each.
pub struct BatchAnswer<'a> {
    /// The version looked up in.
    pub version: u64,
    /// The placement of that version.
    pub placement: &'a Placement,
    /// Replicas listed per key.
    pub replicas: u32,
    /// The keys, in the order given.
    pub keys: &'a [LookupKey],
}

/// Bytes per key and per listed node in the body, about: the buffer is
/// sized once instead of grown.
const BYTES_PER_KEY_AND_REPLICA: usize = 48;

impl BatchAnswer<'_> {
    /// The `200` response: the JSON body, sized before it is written.
    pub fn into_response(self) -> Response {
        let r = self.replicas as usize;
        let mut out =
            Vec::with_capacity(64 + self.keys.len() * BYTES_PER_KEY_AND_REPLICA * (1 + r));
        let mut digits = itoa::Buffer::new();
        out.extend_from_slice(b"{\"version\":");
        out.extend_from_slice(digits.format(self.version).as_bytes());
        out.extend_from_slice(b",\"replicas\":");
        out.extend_from_slice(digits.format(self.replicas).as_bytes());
        out.extend_from_slice(b",\"results\":[");
        for (i, key) in self.keys.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'{');
            write_placement(&mut out, self.placement, key, r, &mut digits);
            out.push(b'}');
        }
        out.extend_from_slice(b"]}");
        json(out)
    }
}

/// The answer to `GET …/lookup`: one key at `version`, `replicas` listed.
pub struct SingleAnswer<'a> {
    /// The version looked up in.
    pub version: u64,
    /// The placement of that version.
    pub placement: &'a Placement,
    /// Replicas listed.
    pub replicas: u32,
    /// The key.
    pub key: &'a LookupKey,
}

impl SingleAnswer<'_> {
    /// The `200` response.
    pub fn into_response(self) -> Response {
        let r = self.replicas as usize;
        let mut out = Vec::with_capacity(64 + BYTES_PER_KEY_AND_REPLICA * (1 + r));
        let mut digits = itoa::Buffer::new();
        out.extend_from_slice(b"{\"version\":");
        out.extend_from_slice(digits.format(self.version).as_bytes());
        out.push(b',');
        write_placement(&mut out, self.placement, self.key, r, &mut digits);
        out.push(b'}');
        json(out)
    }
}

fn json(body: Vec<u8>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// The fields of one key's placement, as [`crate::wire::KeyPlacement`]
/// encodes them, without the braces.
fn write_placement(
    out: &mut Vec<u8>,
    placement: &Placement,
    key: &LookupKey,
    r: usize,
    digits: &mut itoa::Buffer,
) {
    match key {
        LookupKey::Text(text) => {
            out.extend_from_slice(b"\"key\":");
            // Writing a `str` into a Vec cannot fail.
            serde_json::to_writer(&mut *out, text.as_str()).expect("a string encodes");
        }
        LookupKey::Bytes { encoded, .. } => {
            out.extend_from_slice(b"\"key_b64\":\"");
            out.extend_from_slice(encoded.as_bytes());
            out.push(b'"');
        }
    }
    let h = placement.key_hash(key.bytes());
    out.extend_from_slice(b",\"hash\":\"");
    out.extend_from_slice(digits.format(h).as_bytes());
    let picks = placement.preference_of_hash(h, r);
    let nodes = placement.nodes();
    let quoted = |out: &mut Vec<u8>, i: u32| {
        out.push(b'"');
        out.extend_from_slice(nodes[i as usize].id.as_str().as_bytes());
        out.push(b'"');
    };
    // The owner heads the preference list (see `Placement::preference_list`).
    out.extend_from_slice(b"\",\"owner\":");
    match picks.first() {
        Some(&owner) => quoted(out, owner),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"replicas\":[");
    for (k, &i) in picks.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        quoted(out, i);
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{Address, Algorithm, Node, NodeId, NodeState, RingConfig, Weight, Zone};
    use crate::wire::{KeyPlacement, LookupBatchResult, LookupResult};

    /// Seven nodes over three zones, one draining; weighted 1 to 3 unless
    /// `even` (zone awareness refuses a zone lighter than its share).
    fn nodes(even: bool) -> Vec<Node> {
        (0..7)
            .map(|i| {
                let weight = if even { 1 } else { 1 + i % 3 };
                let mut n = Node::new(NodeId::new(format!("n-{i}")).unwrap())
                    .with_weight(Weight::new(weight).unwrap())
                    .with_zone(Zone::new(["a", "b", "c"][i as usize % 3]).unwrap());
                n.address = Some(Address::new(format!("10.0.0.{i}:11211")).unwrap());
                if i == 6 {
                    n = n.with_state(NodeState::Draining);
                }
                n
            })
            .collect()
    }

    /// One key's owned entry, as the handlers built it before.
    fn owned_entry(p: &Placement, r: u32, k: &LookupKey) -> KeyPlacement {
        let bytes = k.bytes();
        let (key, key_b64) = k.clone().into_echo();
        KeyPlacement {
            key,
            key_b64,
            hash: p.key_hash(bytes).to_string(),
            owner: p.owner(bytes).map(ToString::to_string),
            replicas: p
                .preference_list(bytes, r as usize)
                .into_iter()
                .map(ToString::to_string)
                .collect(),
        }
    }

    /// The owned encoding, as the handler built it before.
    fn owned(version: u64, p: &Placement, r: u32, keys: &[LookupKey]) -> Vec<u8> {
        let results = keys.iter().map(|k| owned_entry(p, r, k)).collect();
        let result = LookupBatchResult {
            version,
            replicas: r,
            results,
        };
        serde_json::to_vec(&result).unwrap()
    }

    fn keys() -> Vec<LookupKey> {
        let mut keys: Vec<LookupKey> = (0..300)
            .map(|i| LookupKey::Text(format!("user:{i}")))
            .collect();
        // Text that JSON must escape, and bytes that are not UTF-8.
        keys.push(LookupKey::Text(
            "quote \" backslash \\ newline \n tab \t \u{1} é 🦀".into(),
        ));
        keys.push(LookupKey::Text(String::new()));
        keys.push(LookupKey::from_base64("keys_b64[0]", "/w==".into()).unwrap());
        keys.push(LookupKey::from_base64("keys_b64[1]", "gICAgA==".into()).unwrap());
        keys
    }

    fn body(response: Response) -> Vec<u8> {
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let bytes = futures_util::FutureExt::now_or_never(axum::body::to_bytes(
            response.into_body(),
            usize::MAX,
        ))
        .unwrap()
        .unwrap();
        bytes.to_vec()
    }

    #[test]
    fn the_body_is_the_owned_encoding_byte_for_byte_for_every_algorithm() {
        let keys = keys();
        for algorithm in Algorithm::ALL {
            for zone_aware in [false, true] {
                let mut config = RingConfig::new(algorithm);
                config.zone_aware = zone_aware;
                let p = Placement::build(&config, &nodes(zone_aware)).unwrap();
                for r in [1, 3, 9] {
                    let got = body(
                        BatchAnswer {
                            version: 42,
                            placement: &p,
                            replicas: r,
                            keys: &keys,
                        }
                        .into_response(),
                    );
                    assert_eq!(
                        String::from_utf8(got).unwrap(),
                        String::from_utf8(owned(42, &p, r, &keys)).unwrap(),
                        "{algorithm:?} zone_aware {zone_aware} replicas {r}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_single_answer_is_the_owned_encoding_byte_for_byte() {
        for algorithm in Algorithm::ALL {
            let p = Placement::build(&RingConfig::new(algorithm), &nodes(false)).unwrap();
            for key in keys() {
                for r in [1, 3] {
                    let got = body(
                        SingleAnswer {
                            version: 7,
                            placement: &p,
                            replicas: r,
                            key: &key,
                        }
                        .into_response(),
                    );
                    let e = owned_entry(&p, r, &key);
                    let want = serde_json::to_vec(&LookupResult {
                        version: 7,
                        key: e.key,
                        key_b64: e.key_b64,
                        hash: e.hash,
                        owner: e.owner,
                        replicas: e.replicas,
                    })
                    .unwrap();
                    assert_eq!(
                        String::from_utf8(got).unwrap(),
                        String::from_utf8(want).unwrap(),
                        "{algorithm:?} replicas {r}"
                    );
                }
            }
        }
    }

    #[test]
    fn an_empty_ring_answers_no_owner_for_each_key() {
        let p = Placement::build(&RingConfig::new(Algorithm::Ring), &[]).unwrap();
        let keys = [LookupKey::Text("k".into())];
        let got = body(
            BatchAnswer {
                version: 1,
                placement: &p,
                replicas: 3,
                keys: &keys,
            }
            .into_response(),
        );
        let hash = p.key_hash(b"k");
        assert_eq!(
            String::from_utf8(got).unwrap(),
            format!(
                r#"{{"version":1,"replicas":3,"results":[{{"key":"k","hash":"{hash}","owner":null,"replicas":[]}}]}}"#
            )
        );
    }
}
