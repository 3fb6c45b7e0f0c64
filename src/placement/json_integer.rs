//! Integers in JSON requests, as JSON Schema counts them.
//!
//! JSON has one kind of number, and JSON Schema's `type: integer` (which
//! the OpenAPI document gives every count, weight and version) admits
//! `2.0` as well as `2`. serde's integer deserializers refuse `2.0`, so a
//! client that writes its integers through a float type would be refused
//! although its request matches the document. The fields the document
//! types as integers read through [`JsonU64`] instead: any non-negative
//! number without a fractional part, up to 2^53 when written as a float
//! (beyond that a float no longer names one integer).

use std::fmt;

use serde::de::{self, Deserializer, Unexpected, Visitor};
use serde::Deserialize;

/// Largest float that still stands for exactly one integer.
const MAX_EXACT_FLOAT: f64 = 9_007_199_254_740_992.0;

/// A non-negative JSON integer, written with or without a `.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonU64(pub u64);

impl<'de> Deserialize<'de> for JsonU64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonU64Visitor)
    }
}

struct JsonU64Visitor;

impl Visitor<'_> for JsonU64Visitor {
    type Value = JsonU64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a non-negative integer")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<JsonU64, E> {
        Ok(JsonU64(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<JsonU64, E> {
        u64::try_from(v)
            .map(JsonU64)
            .map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<JsonU64, E> {
        if v.is_finite() && v.fract() == 0.0 && (0.0..=MAX_EXACT_FLOAT).contains(&v) {
            // Exact: an integral float within 2^53.
            Ok(JsonU64(v as u64))
        } else {
            Err(E::invalid_value(Unexpected::Float(v), &self))
        }
    }
}

/// For `#[serde(default, deserialize_with = "…::option")]` on an optional
/// integer field of any unsigned type.
pub fn option<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64>,
{
    match Option::<JsonU64>::deserialize(d)? {
        None => Ok(None),
        Some(JsonU64(n)) => T::try_from(n)
            .map(Some)
            .map_err(|_| de::Error::invalid_value(Unexpected::Unsigned(n), &"a smaller integer")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<u64, String> {
        serde_json::from_str::<JsonU64>(json)
            .map(|n| n.0)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn integral_numbers_are_read_with_or_without_a_fraction() {
        assert_eq!(read("7"), Ok(7));
        assert_eq!(read("7.0"), Ok(7));
        assert_eq!(read("7e2"), Ok(700));
        assert_eq!(read("0.0"), Ok(0));
        assert_eq!(read("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(read("9007199254740992.0"), Ok(1 << 53));
    }

    #[test]
    fn fractions_negatives_and_inexact_floats_are_refused() {
        for (json, shown) in [
            ("7.5", "floating point `7.5`"),
            ("-1", "integer `-1`"),
            ("-1.0", "floating point `-1.0`"),
            ("1e300", "floating point `1e+300`"),
            (
                "18446744073709551615.0",
                "floating point `1.8446744073709552e+19`",
            ),
        ] {
            assert_eq!(
                read(json),
                Err(format!(
                    "invalid value: {shown}, expected a non-negative integer at line 1 column {}",
                    json.len()
                )),
                "{json}"
            );
        }
        assert_eq!(
            read("\"7\""),
            Err(
                "invalid type: string \"7\", expected a non-negative integer at line 1 column 3"
                    .into()
            )
        );
    }

    #[test]
    fn optional_fields_narrow_to_their_type() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct Body {
            #[serde(default, deserialize_with = "option")]
            replicas: Option<u32>,
        }
        let read = |json: &str| serde_json::from_str::<Body>(json).map_err(|e| e.to_string());
        assert_eq!(read("{}"), Ok(Body { replicas: None }));
        assert_eq!(read(r#"{"replicas":null}"#), Ok(Body { replicas: None }));
        assert_eq!(read(r#"{"replicas":3.0}"#), Ok(Body { replicas: Some(3) }));
        assert_eq!(
            read(r#"{"replicas":4294967296}"#),
            Err("invalid value: integer `4294967296`, expected a smaller integer at line 1 column 23".into())
        );
    }
}
