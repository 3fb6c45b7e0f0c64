//! Bearer-token access control.
//!
//! Two optional tokens: the admin token guards mutations, the read token
//! guards reads (the admin token can read too). Tokens are kept only as
//! SHA-256 digests and compared in constant time, so neither the length
//! nor a prefix of a token leaks through timing, and they are never logged.

use std::fmt;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use sha2::{Digest, Sha256};
use subtle::{Choice, ConstantTimeEq};

use super::problem::{ApiError, ProblemKind};
use super::AppState;
use crate::ring::Role;
use crate::wire::{AccessView, TokenKind};

/// A token, as its SHA-256 digest.
#[derive(Clone)]
struct Secret([u8; 32]);

impl Secret {
    fn new(token: &str) -> Self {
        Self(Sha256::digest(token.as_bytes()).into())
    }

    fn matches(&self, presented: &Secret) -> Choice {
        self.0.ct_eq(&presented.0)
    }
}

/// Which tokens the service requires. Empty tokens count as unset.
#[derive(Clone, Default)]
pub struct AuthConfig {
    admin: Option<Secret>,
    read: Option<Secret>,
}

impl fmt::Debug for AuthConfig {
    // Never print tokens, not even their digests.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthConfig")
            .field("admin_token", &self.admin.as_ref().map(|_| "<set>"))
            .field("read_token", &self.read.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// What a presented token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presented {
    None,
    Invalid,
    Read,
    Admin,
}

impl AuthConfig {
    /// Access control with the given tokens.
    pub fn new(admin_token: Option<&str>, read_token: Option<&str>) -> Self {
        let secret = |t: Option<&str>| t.filter(|t| !t.is_empty()).map(Secret::new);
        Self {
            admin: secret(admin_token),
            read: secret(read_token),
        }
    }

    /// Whether mutations need the admin token.
    pub fn has_admin_token(&self) -> bool {
        self.admin.is_some()
    }

    fn classify(&self, headers: &HeaderMap) -> Result<Presented, ApiError> {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Ok(Presented::None);
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .ok_or_else(|| {
                unauthorized("the Authorization header must be `Bearer <token>`")
                    .with_field("Authorization")
            })?;
        let presented = Secret::new(token);
        // Evaluate both comparisons every time so the timing does not say
        // which token (if any) was close.
        let is_admin = self
            .admin
            .as_ref()
            .map_or(Choice::from(0), |s| s.matches(&presented));
        let is_read = self
            .read
            .as_ref()
            .map_or(Choice::from(0), |s| s.matches(&presented));
        Ok(match (bool::from(is_admin), bool::from(is_read)) {
            (true, _) => Presented::Admin,
            (false, true) => Presented::Read,
            (false, false) => Presented::Invalid,
        })
    }

    /// What the request's credentials may do, for `GET /v1/access`. A
    /// malformed header counts as an invalid token: this never refuses.
    pub fn access(&self, headers: &HeaderMap) -> AccessView {
        let token = match self.classify(headers) {
            Ok(Presented::None) => TokenKind::None,
            Ok(Presented::Read) => TokenKind::Read,
            Ok(Presented::Admin) => TokenKind::Admin,
            Ok(Presented::Invalid) | Err(_) => TokenKind::Invalid,
        };
        AccessView {
            token,
            read: self.authorize_read(headers).is_ok(),
            write: self.authorize_write(headers).is_ok(),
            read_token_required: self.read.is_some(),
            admin_token_required: self.admin.is_some(),
        }
    }

    /// Checks a request that only reads.
    pub fn authorize_read(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        if self.read.is_none() {
            return Ok(());
        }
        match self.classify(headers)? {
            Presented::Read | Presented::Admin => Ok(()),
            Presented::None => Err(unauthorized(
                "reads need `Authorization: Bearer <token>` with the read or the admin token",
            )),
            Presented::Invalid => Err(unauthorized("the bearer token is not valid")),
        }
    }

    /// Checks a mutation; returns the role recorded in the change.
    pub fn authorize_write(&self, headers: &HeaderMap) -> Result<Role, ApiError> {
        if self.admin.is_none() {
            return Ok(Role::Anonymous);
        }
        match self.classify(headers)? {
            Presented::Admin => Ok(Role::Admin),
            Presented::Read => Err(ApiError::new(
                ProblemKind::Forbidden,
                "the read token cannot change rings; use the admin token",
            )),
            Presented::None => Err(unauthorized(
                "changes need `Authorization: Bearer <admin token>`",
            )),
            Presented::Invalid => Err(unauthorized("the bearer token is not valid")),
        }
    }
}

fn unauthorized(detail: &str) -> ApiError {
    ApiError::new(ProblemKind::Unauthorized, detail)
}

/// Extractor: the request may read (read or admin token, when required).
#[derive(Debug, Clone, Copy)]
pub struct Reader;

impl FromRequestParts<AppState> for Reader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        state.auth.authorize_read(&parts.headers).map(|()| Reader)
    }
}

/// Extractor: the request may change rings, acting as this role.
#[derive(Debug, Clone, Copy)]
pub struct Writer(pub Role);

impl FromRequestParts<AppState> for Writer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        state.auth.authorize_write(&parts.headers).map(Writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn bearer(token: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
        h
    }

    #[test]
    fn roles() {
        let auth = AuthConfig::new(Some("adm"), Some("rd"));
        assert_eq!(auth.authorize_write(&bearer("adm")).unwrap(), Role::Admin);
        assert_eq!(
            auth.authorize_write(&bearer("rd")).unwrap_err().kind,
            ProblemKind::Forbidden
        );
        assert_eq!(
            auth.authorize_write(&bearer("x")).unwrap_err().kind,
            ProblemKind::Unauthorized
        );
        assert_eq!(
            auth.authorize_write(&HeaderMap::new()).unwrap_err().kind,
            ProblemKind::Unauthorized
        );
        assert!(auth.authorize_read(&bearer("rd")).is_ok());
        assert!(auth.authorize_read(&bearer("adm")).is_ok());
        assert!(auth.authorize_read(&HeaderMap::new()).is_err());
        let open = AuthConfig::new(None, Some(""));
        assert_eq!(
            open.authorize_write(&HeaderMap::new()).unwrap(),
            Role::Anonymous
        );
        assert!(open.authorize_read(&HeaderMap::new()).is_ok());
        assert!(!format!("{auth:?}").contains("adm\""));
    }
}
