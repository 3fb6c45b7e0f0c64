//! Bad membership policies are refused with a 400 naming the field and
//! change nothing; a policy is versioned and shown in the config.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::membership_policy::*;
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;

#[tokio::test]
async fn the_policy_is_versioned_shown_in_the_config_and_bad_policies_change_nothing() {
    let server = Ringd::sqlite().start();
    let s = server.api().for_ring("r");
    create(&s, json!({"drain_after": "30s"})).await;
    let policy = json!({
        "on_join": "active", "activate_after": null, "drain_after": "30s",
        "forget_after": null, "on_leave": "remove",
        "max_unhealthy_fraction": 0.5, "max_auto_changes_per_minute": 10
    });
    let ring = s.get_ok("/v1/rings/r").await;
    assert_eq!(ring["config"]["membership"], policy);
    let fingerprint = ring["fingerprint"].clone();
    // The same as a ring without a policy: the policy is not placement.
    let plain = server.api().for_ring("plain");
    create(&plain, json!({})).await;
    assert_eq!(
        s.get_ok("/v1/rings/plain").await["fingerprint"],
        fingerprint
    );
    let v = s
        .change(json!([{"op": "update_config", "config": {"membership": {"forget_after": "10m", "drain_after": null}}}]))
        .await;
    assert_eq!(v, 2);
    let snapshot = s.get_ok("/v1/rings/r/snapshot").await;
    let mut updated = policy.clone();
    updated["drain_after"] = Value::Null;
    updated["forget_after"] = json!("10m");
    assert_eq!(snapshot["config"]["membership"], updated);
    assert_eq!(snapshot["fingerprint"], fingerprint);
    assert_eq!(
        snapshot["change"]["ops"][0]["config"]["membership"],
        updated
    );

    let refusals = [
        (
            json!({"drain_after": "500ms"}),
            "membership.drain_after",
            "below the 1s minimum",
        ),
        (
            json!({"forget_after": "31d"}),
            "membership.forget_after",
            "",
        ),
        (
            json!({"activate_after": 5}),
            "membership.activate_after",
            "",
        ),
        (
            json!({"max_unhealthy_fraction": 0}),
            "membership.max_unhealthy_fraction",
            "above 0 and at most 1",
        ),
        (
            json!({"max_unhealthy_fraction": 1.01}),
            "membership.max_unhealthy_fraction",
            "above 0 and at most 1",
        ),
        (
            json!({"max_auto_changes_per_minute": 0}),
            "membership.max_auto_changes_per_minute",
            "use 1 to 10000",
        ),
        (
            json!({"on_join": "later"}),
            "membership.on_join",
            "unknown variant `later`",
        ),
        (
            json!({"on_leave": "stay"}),
            "membership.on_leave",
            "unknown variant `stay`",
        ),
        (
            json!({"drain": "1s"}),
            "membership.drain",
            "unknown field `drain`",
        ),
    ];
    for (bad, field, words) in refusals {
        let r = s
            .put("/v1/rings/other", json!({"membership": bad.clone()}))
            .await;
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field(field)
                .detail_has(words),
        )
        .await;
        let r = s
            .post(
                "/v1/rings/r/changes",
                json!({"ops": [{"op": "update_config", "config": {"membership": bad}}]}),
            )
            .await;
        let ops_field = format!("ops[0].config.{field}");
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field(&ops_field)
                .detail_has(words),
        )
        .await;
    }
    assert_eq!(
        s.get("/v1/rings/other").await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(version(&s).await, 2);
}
