//! The committed `openapi/openapi.json` must be exactly what the code
//! generates, so the published contract never drifts from the server.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use regex::Regex;

const REGENERATE: &str = "RINGD_BLESS=1 cargo test --release --test api openapi_drift";

#[test]
fn committed_openapi_matches_the_code() {
    let generated = ringd::api::openapi::document_json();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json");
    if std::env::var_os("RINGD_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write openapi/openapi.json");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()))
            + 1;
        panic!(
            "openapi/openapi.json differs from what the code generates (first difference at line {line}).\n\
             Regenerate it with `{REGENERATE}` and commit the result."
        );
    }
}

/// `(route, methods)` for every route `router` serves, read off axum's
/// `Debug` rendering of it: axum lists no routes otherwise, and reading the
/// real router (not a list kept beside it) is the point. HEAD, which axum
/// adds to every GET, is left out.
fn served_routes(
    router: &axum::Router<ringd::api::AppState>,
) -> BTreeMap<String, BTreeSet<String>> {
    let debug = format!("{router:?}");
    // Only the routes proper, not the fallback router after them.
    let routes = debug
        .split("fallback_router")
        .next()
        .expect("split yields a first part");
    let path_of = Regex::new(r#"RouteId\((\d+)\): "([^"]*)""#).unwrap();
    let methods_of =
        Regex::new(r#"RouteId\((\d+)\): MethodRouter\(MethodRouter \{[^}]*allow_header: Bytes\(b"([A-Z,]*)"\)"#)
            .unwrap();
    let paths: BTreeMap<&str, &str> = path_of
        .captures_iter(routes)
        .map(|c| (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str()))
        .collect();
    let methods: BTreeMap<&str, &str> = methods_of
        .captures_iter(routes)
        .map(|c| (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str()))
        .collect();
    assert!(
        paths.len() > 3 && paths.len() == methods.len(),
        "could not read the routes off the router's Debug output (did axum change it?): \
         {} paths, {} method sets",
        paths.len(),
        methods.len()
    );
    paths
        .iter()
        .map(|(id, path)| {
            let allowed = methods
                .get(id)
                .unwrap_or_else(|| panic!("no methods read for {path}"));
            let set = allowed
                .split(',')
                .filter(|m| *m != "HEAD")
                .map(str::to_owned)
                .collect();
            ((*path).to_owned(), set)
        })
        .collect()
}

/// `(path, methods)` of every operation in the document.
fn documented_routes(doc: &utoipa::openapi::OpenApi) -> BTreeMap<String, BTreeSet<String>> {
    let json = serde_json::to_value(doc).unwrap();
    json["paths"]
        .as_object()
        .expect("the document has paths")
        .iter()
        .map(|(path, item)| {
            let methods = item
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| {
                    [
                        "get", "put", "post", "delete", "patch", "options", "trace", "head",
                    ]
                    .contains(&k.as_str())
                })
                .map(|k| k.to_uppercase())
                .collect();
            (path.clone(), methods)
        })
        .collect()
}

#[test]
fn every_served_route_is_documented_and_every_documented_one_served() {
    let (router, doc) = ringd::api::routes_and_document();
    let mut served = served_routes(&router);
    for path in ringd::api::openapi::UNDOCUMENTED_ROUTES {
        assert!(
            served.remove(*path).is_some(),
            "{path} is listed as served without documentation, but the router does not serve it"
        );
    }
    let documented = documented_routes(&doc);
    for path in ringd::api::openapi::UNDOCUMENTED_ROUTES {
        assert!(
            !documented.contains_key(*path),
            "{path} is in the document; take it off UNDOCUMENTED_ROUTES"
        );
    }
    for (path, methods) in &served {
        assert_eq!(
            documented.get(path),
            Some(methods),
            "{path} is served with {methods:?} but documented with {:?}",
            documented.get(path)
        );
    }
    for (path, methods) in &documented {
        assert_eq!(
            served.get(path),
            Some(methods),
            "{path} is documented with {methods:?} but served with {:?}",
            served.get(path)
        );
    }
    // The router is also the one the document served at /openapi.json
    // comes from, and the routes the old hand-kept list missed are in.
    assert!(
        doc == ringd::api::openapi::document(),
        "the router's document is not the one `document()` builds"
    );
    for path in [
        "/v1/rings/{ring}/watch",
        "/v1/rings/{ring}/clients",
        "/v1/rings/{ring}/clients/{client_id}/ack",
    ] {
        assert!(served.contains_key(path), "{path} is not served");
    }
}
