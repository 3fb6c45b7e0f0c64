//! The web console at `/ui/`: static files (HTML, ES modules, CSS) built
//! into the binary and served with a Content-Security-Policy that lets the
//! page reach nothing but this server. The console reads and changes
//! rings through the public API with the user's token; serving its files
//! needs none, as they hold no data. See `docs/console.md`.
//!
//! Under `/ui/lib/` it serves the JavaScript package's source files
//! (`clients/js/src/`, `@ringd/client`) as they are: the console decodes
//! the placement encoding, computes ownership and checks the fingerprint
//! with the package's own modules, so there is one implementation of each
//! in JavaScript, and neither a build step nor Node.js is needed.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use axum::extract::{Path as UrlPath, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use rust_embed::RustEmbed;
use sha2::{Digest, Sha256};

use super::problem::{ApiError, ProblemKind};
use super::AppState;

/// The console's files, from `src/api/console/`.
#[derive(RustEmbed)]
#[folder = "src/api/console/"]
struct Files;

/// The JavaScript package's source files, from `clients/js/src/`, served
/// at `/ui/lib/` (`/ui/lib/placement/encoding.js` is
/// `clients/js/src/placement/encoding.js`). The console loads only the
/// modules that import no npm package (the encoding, ownership and the
/// fingerprint, and what they import); the others are served but unused.
#[derive(RustEmbed)]
#[folder = "clients/js/src/"]
struct Package;

/// Where under `/ui/` the package's files are: a console file cannot
/// have this prefix (a test checks that none does).
const LIB: &str = "lib/";

/// The policy every console response carries: scripts, styles and
/// requests only from this origin, no inline script or style attribute,
/// no framing. It is what keeps the page from reaching any other host.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; \
     frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// The routes of the console, outside the OpenAPI document: `/ui`
/// redirects to `/ui/`, which serves `index.html`; `/ui/lib/{path}`
/// serves the package's file at `path`; `/ui/{path}` serves the console's
/// file at `path`.
pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(index))
        .route("/ui/{*path}", get(file))
}

async fn index(State(state): State<AppState>, headers: HeaderMap) -> Response {
    serve(&state, "index.html", &headers)
}

async fn file(
    State(state): State<AppState>,
    UrlPath(path): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    serve(&state, &path, &headers)
}

fn serve(state: &AppState, path: &str, headers: &HeaderMap) -> Response {
    let body = match path.strip_prefix(LIB) {
        Some(rest) => package_file(state.settings.console_dir.as_deref(), rest),
        None => match &state.settings.console_dir {
            Some(dir) => from_dir(dir, path),
            None => Files::get(path).map(|f| f.data),
        },
    };
    let Some(body) = body else {
        return ApiError::new(
            ProblemKind::RouteNotFound,
            format!(
                "the console has no file `{}`; open /ui/",
                path.chars().take(200).collect::<String>()
            ),
        )
        .into_response();
    };
    // A strong validator from the bytes, so a browser revalidates cheaply
    // and never runs a stale module after an upgrade.
    let tag = format!("\"{:x}\"", Sha256::digest(&body));
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(header::CONTENT_TYPE, content_type(path))],
            body.into_owned(),
        )
            .into_response()
    };
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&tag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// The package's file at `path`. With `--console-dir DIR`, from `DIR/lib/`
/// when that folder exists (e.g. a link to `clients/js/src`, to work on
/// the package's modules too), else from the copy built in: never a mix
/// of the two.
fn package_file(console_dir: Option<&Path>, path: &str) -> Option<Cow<'static, [u8]>> {
    match console_dir.map(|d| d.join(LIB.trim_end_matches('/'))) {
        Some(lib) if lib.is_dir() => from_dir(&lib, path),
        _ => Package::get(path).map(|f| f.data),
    }
}

/// The file at `path` under `dir`, for `--console-dir`. Only plain
/// relative segments are followed, so a request cannot leave `dir`.
fn from_dir(dir: &Path, path: &str) -> Option<Cow<'static, [u8]>> {
    let mut full = PathBuf::from(dir);
    for segment in path.split('/') {
        let plain = !segment.is_empty()
            && segment != "."
            && segment != ".."
            && !segment.contains('\\')
            && !segment.contains(':');
        if !plain {
            return None;
        }
        full.push(segment);
    }
    std::fs::read(full).ok().map(Cow::Owned)
}

fn content_type(path: &str) -> HeaderValue {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    HeaderValue::from_static(match ext {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "json" => "application/json",
        _ => "application/octet-stream",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_console_dir_is_never_left() {
        let dir = Path::new("src/api/console");
        for bad in [
            "../mod.rs",
            "a/../../mod.rs",
            "/etc/passwd",
            "",
            "a//b",
            "..\\x",
            "C:x",
        ] {
            assert_eq!(from_dir(dir, bad), None, "{bad}");
        }
    }

    #[test]
    fn the_console_is_built_in_with_its_index() {
        let index = Files::get("index.html").expect("index.html is embedded");
        assert!(std::str::from_utf8(&index.data)
            .unwrap()
            .contains("type=\"module\""));
        assert_eq!(content_type("app.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("x"), "application/octet-stream");
    }

    #[test]
    fn the_package_is_built_in_and_no_console_file_hides_under_lib() {
        for module in ["encoding.js", "ownership.js", "fingerprint.js"] {
            let path = format!("placement/{module}");
            let built_in = Package::get(&path).expect("the package's module is embedded");
            let on_disk = std::fs::read(format!("clients/js/src/{path}")).unwrap();
            assert_eq!(&*built_in.data, &on_disk[..], "{path}");
            assert_eq!(package_file(None, &path).as_deref(), Some(&on_disk[..]));
        }
        // Without a lib/ of its own, a console folder gets the built-in package.
        let dir = Path::new("src/api/console");
        assert!(package_file(Some(dir), "placement/encoding.js").is_some());
        assert_eq!(package_file(Some(dir), "../console.rs"), None);
        assert!(Files::iter().all(|f| !f.starts_with(LIB)));
    }
}
