//! The named schemas of the durations the API takes as strings in the
//! `wait=` format (a long-poll's wait, a lease's TTL, the membership
//! policy's delays, a rollout's dwell and gate timeout), each pattern built
//! from the bounds its validator checks.

use utoipa::openapi::schema::{ObjectBuilder, Type};

use super::named_schema;
use crate::ring::durations::{DEFAULT_LEASE_TTL, LEASE_TTL, LONG_POLL_WAIT};
use crate::ring::membership_policy::POLICY_DELAY;
use crate::wire::duration::{duration_pattern, wait_pattern};

named_schema!(
    /// A long-poll's `wait`.
    WaitSchema = "Wait",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(wait_pattern()))
        .description(Some(format!(
            "How long to wait for a newer version: a whole number of `ms`, `s` (the default unit), `m` or `h`, {}.",
            LONG_POLL_WAIT.range()
        )))
);

named_schema!(
    /// A lease's `ttl`.
    LeaseTtlSchema = "LeaseTtl",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(duration_pattern(&LEASE_TTL)))
        .description(Some(format!(
            "How long a lease lasts without a renewal: a whole number of `ms`, `s` (the default unit), `m` or `h`, {}; default {}.",
            LEASE_TTL.range(),
            crate::ring::durations::format_duration(DEFAULT_LEASE_TTL)
        )))
);

named_schema!(
    /// A membership policy delay (`activate_after`, `drain_after`,
    /// `forget_after`), or `null` for off.
    PolicyDelaySchema = "PolicyDelay",
    ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([Type::String, Type::Null]))
        .pattern(Some(duration_pattern(&POLICY_DELAY)))
        .description(Some(format!(
            "A whole number of `ms`, `s` (the default unit), `m` or `h`, {}; `null`: off.",
            POLICY_DELAY.range()
        )))
);

named_schema!(
    /// A rollout's `min_dwell`.
    MinDwellSchema = "MinDwell",
    ObjectBuilder::new()
        .schema_type(Type::String)
        // Zero, in any unit, is allowed too (the default: no dwell).
        .pattern(Some(format!(
            "^(?:0+(?:ms|s?|m|h)|{})$",
            duration_pattern(&crate::ring::rollout::MIN_DWELL)
                .trim_start_matches('^')
                .trim_end_matches('$')
        )))
        .description(Some(format!(
            "Shortest time between a step's commit and the next step: a whole number of `ms`, `s` (the default unit), `m` or `h`, {}; default `0s`.",
            crate::ring::rollout::MIN_DWELL.range()
        )))
);

named_schema!(
    /// A rollout's `gate_timeout`.
    GateTimeoutSchema = "GateTimeout",
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(duration_pattern(&crate::ring::rollout::GATE_TIMEOUT)))
        .description(Some(format!(
            "How long a step waits for its gate: a whole number of `ms`, `s` (the default unit), `m` or `h`, {}; default {}.",
            crate::ring::rollout::GATE_TIMEOUT.range(),
            crate::ring::durations::format_duration(crate::ring::rollout::DEFAULT_GATE_TIMEOUT)
        )))
);
