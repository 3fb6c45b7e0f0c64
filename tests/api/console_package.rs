//! The console and the JavaScript package (`clients/js`, `@ringd/client`)
//! share one implementation of the placement encoding: ringd serves the
//! package's source files under `/ui/lib/` byte for byte as they are on
//! disk, the console imports its decoder, ownership and fingerprint from
//! there, and no file of the console holds a decoder of its own.

use std::path::Path;

use regex::Regex;
use reqwest::{Method, StatusCode};

use super::console_serving::{assert_no_console_file, CSP};
use crate::support::api::TestApi;
use crate::support::ringd::Ringd;

const PACKAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/clients/js/src");
const CONSOLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/api/console");

/// Every file under `dir`, as (path relative to it with `/`, bytes), in
/// path order.
fn files(dir: &str) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap();
                let rel = rel
                    .components()
                    .map(|c| c.as_os_str().to_str().unwrap())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(Path::new(dir), Path::new(dir), &mut out);
    out.sort();
    out
}

/// GET `path`: 200 with the console's headers and exactly `want`.
async fn assert_served(s: &TestApi, path: &str, want: &[u8]) {
    let r = s.get(path).await;
    assert_eq!(r.status(), StatusCode::OK, "{path}");
    let h = r.headers().clone();
    if path.ends_with(".js") {
        assert_eq!(
            h["content-type"], "text/javascript; charset=utf-8",
            "{path}"
        );
    }
    assert_eq!(h["content-security-policy"], CSP, "{path}");
    assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
    assert_eq!(h["referrer-policy"], "no-referrer", "{path}");
    assert_eq!(h["cache-control"], "no-cache", "{path}");
    assert!(h.contains_key("etag"), "{path}");
    assert!(
        r.bytes().await.unwrap() == want,
        "{path} is not served as it is"
    );
}

#[tokio::test]
async fn the_package_modules_are_served_under_the_console_as_they_are() {
    let s = Ringd::sqlite().in_process().start();
    let package = files(PACKAGE);
    for module in ["encoding.js", "ownership.js", "fingerprint.js"] {
        assert!(
            package
                .iter()
                .any(|(p, _)| *p == format!("placement/{module}")),
            "{module}"
        );
    }
    for (rel, bytes) in &package {
        assert_served(&s, &format!("/ui/lib/{rel}"), bytes).await;
    }

    // The validator, as for the console's own files.
    let path = "/ui/lib/placement/encoding.js";
    let tag = s.get(path).await.headers()["etag"]
        .to_str()
        .unwrap()
        .to_owned();
    let r = s
        .req(Method::GET, path)
        .header("if-none-match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(r.headers()["etag"], tag.as_str());

    for missing in [
        "/ui/lib/",
        "/ui/lib/nope.js",
        "/ui/lib/placement/nope.js",
        "/ui/lib/placement/",
        // The package's files are under lib/ only, and the console's are not.
        "/ui/placement/encoding.js",
        "/ui/lib/app.js",
    ] {
        assert_no_console_file(&s, missing).await;
    }
}

/// What would give away a second decoder of the placement encoding: its
/// magic bytes in any of the ways JavaScript writes them, or binary reads
/// (a `DataView` and its getters, or little-endian words put together by
/// hand). The console has no reason to read binary data itself.
fn decoder_signs(source: &str) -> Vec<&'static str> {
    let signs = [
        (
            "the magic in hex",
            r"(?i)0x52\s*,\s*0x49\s*,\s*0x4e\s*,\s*0x47",
        ),
        ("the magic in decimal", r"\b82\s*,\s*73\s*,\s*78\s*,\s*71\b"),
        ("the magic as text", r"RINGDPL"),
        ("a DataView", r"\bDataView\b"),
        (
            "a DataView read",
            r"\.get(?:Uint|Int|BigUint|BigInt|Float)(?:8|16|32|64)\s*\(",
        ),
        ("a word assembled from bytes", r"<<\s*(?:8|16|24)\b"),
    ];
    signs
        .into_iter()
        .filter(|(_, re)| Regex::new(re).unwrap().is_match(source))
        .map(|(sign, _)| sign)
        .collect()
}

/// The module specifiers `source` imports from, resolved against `file`
/// (a path relative to the console's folder): `pages/ring.js` importing
/// `../lib/placement/encoding.js` gives `lib/placement/encoding.js`.
fn imports(file: &str, source: &str) -> Vec<(String, String)> {
    let re = Regex::new(r#"import\s*\{([^}]*)\}\s*from\s*["']([^"']+)["']"#).unwrap();
    re.captures_iter(source)
        .map(|c| {
            let mut path: Vec<&str> = file.split('/').collect();
            path.pop();
            for segment in c[2].split('/') {
                match segment {
                    "." => {}
                    ".." => {
                        path.pop();
                    }
                    s => path.push(s),
                }
            }
            (path.join("/"), c[1].to_string())
        })
        .collect()
}

#[tokio::test]
async fn the_console_decodes_with_the_package_and_has_no_decoder_of_its_own() {
    let s = Ringd::sqlite().in_process().start();
    let console = files(CONSOLE);
    assert!(console.iter().any(|(p, _)| p == "index.html"));
    // What is walked is what the server serves.
    for (rel, bytes) in &console {
        assert_served(&s, &format!("/ui/{rel}"), bytes).await;
    }

    // The console imports the encoding's decoder, ownership and the
    // fingerprint from the package's files, where the server serves them.
    let imported: Vec<(String, String)> = console
        .iter()
        .filter(|(p, _)| p.ends_with(".js"))
        .flat_map(|(p, b)| imports(p, std::str::from_utf8(b).unwrap()))
        .collect();
    for (module, name) in [
        ("lib/placement/encoding.js", "decodeEncoding"),
        ("lib/placement/ownership.js", "ownershipOf"),
        ("lib/placement/fingerprint.js", "fingerprint"),
    ] {
        assert!(
            imported
                .iter()
                .any(|(m, names)| m == module && names.split(',').any(|n| n.trim() == name)),
            "no console module imports {name} from {module}: {imported:?}"
        );
    }
    // Every module the console imports is one the server has.
    for (module, _) in &imported {
        let r = s.get(&format!("/ui/{module}")).await;
        assert_eq!(r.status(), StatusCode::OK, "{module}");
    }

    // No file of the console decodes the encoding itself.
    for (rel, bytes) in &console {
        let signs = decoder_signs(&String::from_utf8_lossy(bytes));
        assert!(
            signs.is_empty(),
            "src/api/console/{rel} looks like a second decoder of the placement encoding \
             ({}): decode it with the package's decodeEncoding instead",
            signs.join(", ")
        );
    }
    // The signs do give a decoder away: the package's own shows them all but
    // the decimal magic, and so did the console's copy that this replaced.
    let own = std::fs::read_to_string(format!("{PACKAGE}/placement/encoding.js")).unwrap();
    let found = decoder_signs(&own);
    for sign in [
        "the magic in hex",
        "the magic as text",
        "a DataView",
        "a word assembled from bytes",
    ] {
        assert!(found.contains(&sign), "{sign} not found in {found:?}");
    }
    let old_copy = "const MAGIC = [0x52, 0x49, 0x4e, 0x47, 0x44, 0x50, 0x4c, 0x01];\n\
                    const v = new DataView(buffer);\n\
                    pos[i] = v.getUint32(o, true) / TWO32;";
    assert_eq!(
        decoder_signs(old_copy),
        ["the magic in hex", "a DataView", "a DataView read"]
    );
}

#[tokio::test]
async fn a_console_dir_takes_the_package_from_its_lib_folder_or_the_built_in_copy() {
    let encoding = std::fs::read(format!("{PACKAGE}/placement/encoding.js")).unwrap();
    // Without a lib/ folder: the built-in package.
    let bare = tempfile::tempdir().unwrap();
    std::fs::write(bare.path().join("index.html"), "<!doctype html>").unwrap();
    let server = Ringd::sqlite()
        .args(&["--console-dir", bare.path().to_str().unwrap()])
        .start();
    let s = server.api();
    assert_served(s, "/ui/", b"<!doctype html>").await;
    assert_served(s, "/ui/lib/placement/encoding.js", &encoding).await;

    // With one: only its files, never a mix with the built-in copy.
    let with_lib = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(with_lib.path().join("lib/placement")).unwrap();
    std::fs::write(
        with_lib.path().join("lib/placement/encoding.js"),
        "// a module being worked on\n",
    )
    .unwrap();
    let server = Ringd::sqlite()
        .args(&["--console-dir", with_lib.path().to_str().unwrap()])
        .start();
    let s = server.api();
    assert_served(
        s,
        "/ui/lib/placement/encoding.js",
        b"// a module being worked on\n",
    )
    .await;
    assert_no_console_file(s, "/ui/lib/placement/ownership.js").await;
}
