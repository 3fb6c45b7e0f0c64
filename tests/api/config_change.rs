//! Changing a ring's configuration never defaults an omitted field:
//! `set_config` needs the complete config, `update_config` patches the
//! current one, and every change result shows the config before and
//! after.

use crate::support::api::expect_json;
use crate::support::api::TestApi;
use crate::support::in_process::InProcessServer;
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;
use reqwest::StatusCode;
use serde_json::{json, Value};

/// A ketama ring `k` with three nodes, at version 4.
async fn ketama() -> InProcessServer {
    let s = Ringd::sqlite().in_process().start();
    let r = s
        .put(
            "/v1/rings/k",
            json!({"algorithm": "ketama", "replication_factor": 3}),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await;
    for n in ["a", "b", "c"] {
        let r = s.put(&format!("/v1/rings/k/nodes/{n}"), json!({})).await;
        expect_json(r, StatusCode::CREATED).await;
    }
    s
}

fn ketama_config(replication_factor: u64) -> Value {
    json!({
        "algorithm": "ketama",
        "hash": "md5",
        "vnodes_per_weight": 160,
        "replication_factor": replication_factor,
        "zone_aware": false
    })
}

/// `config` as a ring's config view shows it: with the membership policy
/// (here the default one), which recorded ops show only when they set it.
fn with_policy(mut config: Value) -> Value {
    config["membership"] = json!({
        "on_join": "active", "activate_after": null, "drain_after": null,
        "forget_after": null, "on_leave": "remove",
        "max_unhealthy_fraction": 0.5, "max_auto_changes_per_minute": 10
    });
    config
}

async fn change(s: &TestApi, body: Value) -> reqwest::Response {
    s.post("/v1/rings/k/changes", body).await
}

#[tokio::test]
async fn a_partial_set_config_is_refused_and_changes_nothing() {
    let s = ketama().await;
    let before = s.state_of("k").await;
    let r = change(
        &s,
        json!({"ops": [{"op": "set_config", "config": {"replication_factor": 2}}]}),
    )
    .await;
    assert_problem(r, Problem::status(400).slug("invalid-input").field("ops[0].config").detail_has("a set_config op replaces the whole configuration, but `ops[0].config` lacks `algorithm`, `hash`, `vnodes_per_weight`, `zone_aware`; send every field (as `config` in GET /v1/rings/{ring}), or use {\"op\": \"update_config\"} to change only the fields given"))
    .await;
    // Also in a dry run, and also when it is the second op.
    let r = change(
        &s,
        json!({"dry_run": true, "ops": [
            {"op": "remove", "id": "a"},
            {"op": "set_config", "config": {"algorithm": "ketama", "hash": "md5"}}]}),
    )
    .await;
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("ops[1].config")
            .detail_has("lacks `vnodes_per_weight`, `replication_factor`, `zone_aware`;"),
    )
    .await;
    assert_eq!(s.state_of("k").await, before);
    let ring = s.get_ok("/v1/rings/k").await;
    assert_eq!(ring["config"], with_policy(ketama_config(3)));
}

#[tokio::test]
async fn update_config_patches_and_the_preview_shows_both_configs() {
    let s = ketama().await;
    let patch = json!({"ops": [{"op": "update_config", "config": {"replication_factor": 2}}],
                       "reason": "two copies", "dry_run": true});
    let preview = expect_json(change(&s, patch.clone()).await, StatusCode::OK).await;
    assert_eq!(preview["dry_run"], true);
    assert_eq!(preview["changed"], true);
    assert_eq!(preview["base_version"], 4);
    assert_eq!(preview["version"], 5);
    assert_eq!(
        preview["config_change"],
        json!({"from": with_policy(ketama_config(3)), "to": with_policy(ketama_config(2))})
    );
    assert_eq!(preview["summary"]["config"], with_policy(ketama_config(2)));
    // The replication factor moves no key.
    assert_eq!(preview["diff"]["moved_fraction"], 0.0);
    assert_eq!(s.state_of("k").await.0, 4);

    let mut commit = patch;
    commit.as_object_mut().unwrap().remove("dry_run");
    let r = s
        .req(reqwest::Method::POST, "/v1/rings/k/changes")
        .header("idempotency-key", "rf-2")
        .json(&commit)
        .send()
        .await
        .unwrap();
    let committed = expect_json(r, StatusCode::OK).await;
    assert_eq!(committed["version"], 5);
    assert_eq!(committed["config_change"], preview["config_change"]);
    let ring = s.get_ok("/v1/rings/k").await;
    assert_eq!(ring["config"], with_policy(ketama_config(2)));
    // The version records the complete config the patch produced.
    let snapshot = s.get_ok("/v1/rings/k/snapshot").await;
    assert_eq!(
        snapshot["change"]["ops"],
        json!([{"op": "set_config", "config": ketama_config(2)}])
    );

    // A retry with the same key is the same commit; the same key with a
    // different patch is refused.
    let retry = s
        .req(reqwest::Method::POST, "/v1/rings/k/changes")
        .header("idempotency-key", "rf-2")
        .json(&commit)
        .send()
        .await
        .unwrap();
    let replayed = expect_json(retry, StatusCode::OK).await;
    assert_eq!(replayed["replayed"], true);
    assert_eq!(replayed["version"], 5);
    assert_eq!(replayed["config_change"], preview["config_change"]);
    let other = s
        .req(reqwest::Method::POST, "/v1/rings/k/changes")
        .header("idempotency-key", "rf-2")
        .json(&json!({"ops": [{"op": "update_config", "config": {"replication_factor": 4}}]}))
        .send()
        .await
        .unwrap();
    assert_problem(
        other,
        Problem::status(422)
            .slug("idempotency-key-reused")
            .field("Idempotency-Key")
            .detail_has("already used for a different change (version 5)"),
    )
    .await;

    // The same patch again alters nothing: no version, no config change.
    let again = json!({"ops": [{"op": "update_config", "config": {"replication_factor": 2}}]});
    let same = expect_json(change(&s, again).await, StatusCode::OK).await;
    assert_eq!(same["changed"], false);
    assert_eq!(same["version"], 5);
    assert!(same.get("config_change").is_none(), "{same}");
    // A change of nodes only carries no config change either.
    let nodes = json!({"ops": [{"op": "remove", "id": "c"}], "dry_run": true});
    let nodes = expect_json(change(&s, nodes).await, StatusCode::OK).await;
    assert!(nodes.get("config_change").is_none(), "{nodes}");
}

#[tokio::test]
async fn a_complete_set_config_replaces_everything_it_names() {
    let s = ketama().await;
    let to = json!({"algorithm": "ring", "hash": "xxh3", "vnodes_per_weight": 8,
                    "replication_factor": 2, "zone_aware": false});
    let body = json!({"ops": [{"op": "set_config", "config": to}], "dry_run": true});
    let preview = expect_json(change(&s, body).await, StatusCode::OK).await;
    assert_eq!(
        preview["config_change"],
        json!({"from": with_policy(ketama_config(3)), "to": with_policy(to)})
    );
    assert!(preview["diff"]["moved_fraction"].as_f64().unwrap() > 0.0);
}

#[tokio::test]
async fn a_set_config_of_the_config_a_ring_shows_is_accepted() {
    let s = ketama().await;
    // What GET shows, sent back as it is, is complete and changes nothing.
    let shown = s.get_ok("/v1/rings/k").await["config"].clone();
    assert!(shown.get("table_size").is_none(), "{shown}");
    let body = json!({"ops": [{"op": "set_config", "config": shown}]});
    let same = expect_json(change(&s, body).await, StatusCode::OK).await;
    assert_eq!(same["changed"], false, "{same}");
    // A maglev config needs its table size.
    let maglev = json!({"algorithm": "maglev", "hash": "xxh3", "vnodes_per_weight": 160,
                        "replication_factor": 3, "zone_aware": false});
    let body = json!({"ops": [{"op": "set_config", "config": maglev}], "dry_run": true});
    assert_problem(
        change(&s, body).await,
        Problem::status(400)
            .slug("invalid-input")
            .field("ops[0].config")
            .detail_has("lacks `table_size`;"),
    )
    .await;
    let mut maglev = maglev;
    maglev["table_size"] = json!(251);
    let body = json!({"ops": [{"op": "set_config", "config": maglev}], "dry_run": true});
    let preview = expect_json(change(&s, body).await, StatusCode::OK).await;
    assert_eq!(preview["config_change"]["to"]["table_size"], 251);
}

#[tokio::test]
async fn patches_are_validated_with_the_fields_named() {
    let s = ketama().await;
    let before = s.state_of("k").await;
    let cases = [
        (
            json!({}),
            "ops[0].config",
            "`ops[0].config` is empty: an update_config op changes at least one field",
        ),
        (
            json!({"vnodes_per_weight": 0}),
            "ops[0].config.vnodes_per_weight",
            "vnodes_per_weight 0",
        ),
        (
            json!({"replication_factor": 65}),
            "ops[0].config.replication_factor",
            "65",
        ),
        (json!({"hash": "xxh3"}), "ops[0].config.hash", "md5"),
        (
            json!({"algorithm": "maglev", "table_size": 100}),
            "ops[0].config.table_size",
            "100",
        ),
        (
            json!({"colour": "blue"}),
            "ops[0].config.colour",
            "unknown field `colour`",
        ),
    ];
    for (patch, field, detail) in cases {
        let r = change(
            &s,
            json!({"ops": [{"op": "update_config", "config": patch}]}),
        )
        .await;
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field(field)
                .detail_has(detail),
        )
        .await;
    }
    // Cross-field rules are checked against the config at that point of
    // the change: after a switch to `ring`, xxh3 is fine.
    let r = change(
        &s,
        json!({"ops": [
            {"op": "update_config", "config": {"algorithm": "ring", "hash": "xxh3"}},
            {"op": "update_config", "config": {"hash": "md5"}}],
            "dry_run": true}),
    )
    .await;
    let ok = expect_json(r, StatusCode::OK).await;
    assert_eq!(ok["config_change"]["to"]["algorithm"], "ring");
    assert_eq!(ok["config_change"]["to"]["hash"], "md5");
    // The second op is named when it is the one that fails.
    let r = change(
        &s,
        json!({"ops": [
            {"op": "update_config", "config": {"algorithm": "ring"}},
            {"op": "update_config", "config": {"algorithm": "ketama", "hash": "sha256"}}]}),
    )
    .await;
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("ops[1].config.hash")
            .detail_has("md5"),
    )
    .await;
    assert_eq!(s.state_of("k").await, before);
}
