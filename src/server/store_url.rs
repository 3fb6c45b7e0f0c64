//! Opening the store `--store` names, with the credentials etcd needs.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Secret, ServeConfig, ServeError};
use crate::store::etcd::{EtcdOptions, EtcdStore, EtcdTls, DEFAULT_MAX_TXN_OPS};
use crate::store::sqlite::SqliteStore;
use crate::store::Store;

/// How to authenticate to etcd: TLS files and a user. All optional; with
/// any TLS file set, endpoints given as `host:port` are reached over HTTPS.
/// Its `Debug` prints no password.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EtcdAccess {
    /// PEM file of the CA that signed etcd's server certificates.
    pub ca_cert: Option<PathBuf>,
    /// PEM file of ringd's client certificate (needs `key`).
    pub cert: Option<PathBuf>,
    /// PEM file of the client certificate's private key (needs `cert`).
    pub key: Option<PathBuf>,
    /// etcd user name (needs `password`).
    pub user: Option<String>,
    /// The user's password.
    pub password: Option<Secret>,
}

impl EtcdAccess {
    /// Checks that paired options come together, before anything is read.
    pub fn validate(&self) -> Result<(), ServeError> {
        let bad = |m: &str| Err(ServeError::EtcdAccess(m.to_owned()));
        match (&self.cert, &self.key) {
            (Some(_), None) => {
                return bad("--etcd-cert needs --etcd-key (the certificate's private key)")
            }
            (None, Some(_)) => return bad("--etcd-key needs --etcd-cert (the client certificate)"),
            _ => {}
        }
        match (&self.user, &self.password) {
            (Some(_), None) => bad("--etcd-user needs --etcd-password (or RINGD_ETCD_PASSWORD)"),
            (None, Some(_)) => bad("--etcd-password needs --etcd-user"),
            _ => Ok(()),
        }
    }

    /// Reads the TLS files, if any are set.
    fn tls(&self) -> Result<Option<EtcdTls>, ServeError> {
        if self.ca_cert.is_none() && self.cert.is_none() {
            return Ok(None);
        }
        let ca_pem = self.ca_cert.as_deref().map(read_pem).transpose()?;
        let identity = match (&self.cert, &self.key) {
            (Some(c), Some(k)) => Some((read_pem(c)?, read_pem(k)?)),
            _ => None,
        };
        Ok(Some(EtcdTls { ca_pem, identity }))
    }
}

fn read_pem(path: &Path) -> Result<Vec<u8>, ServeError> {
    std::fs::read(path)
        .map_err(|e| ServeError::EtcdAccess(format!("cannot read {}: {e}", path.display())))
}

/// The file of a `sqlite://PATH` store URL (`sqlite:///abs` or
/// `sqlite://relative`).
pub fn sqlite_path(url: &str) -> Result<PathBuf, ServeError> {
    match url.strip_prefix("sqlite://") {
        Some(path) if !path.is_empty() => Ok(PathBuf::from(path)),
        _ => Err(ServeError::UnsupportedStore(url.to_owned())),
    }
}

/// A parsed `--store` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// `sqlite://PATH`: the embedded store in one file.
    Sqlite(PathBuf),
    /// `etcd://HOST:PORT[,HOST:PORT…]`: the members of an etcd cluster.
    Etcd(Vec<String>),
}

/// Parses `--store`.
pub fn parse_store_url(url: &str) -> Result<StoreUrl, ServeError> {
    let Some(members) = url.strip_prefix("etcd://") else {
        return sqlite_path(url).map(StoreUrl::Sqlite);
    };
    let endpoints: Vec<String> = members
        .trim_end_matches('/')
        .split(',')
        .map(|m| m.trim().to_owned())
        .collect();
    if endpoints.iter().any(|m| m.is_empty() || m.contains('/')) {
        return Err(ServeError::UnsupportedStore(url.to_owned()));
    }
    Ok(StoreUrl::Etcd(endpoints))
}

/// Opens the store `config` names.
pub(super) async fn open_store(config: &ServeConfig) -> Result<Arc<dyn Store>, ServeError> {
    let failed = |source| ServeError::Store {
        store: config.store_url.clone(),
        source,
    };
    let retention = config.retention;
    match parse_store_url(&config.store_url)? {
        StoreUrl::Sqlite(path) => {
            // Opening creates directories and runs migrations: blocking work.
            let clock = config.clock.clone();
            let store =
                tokio::task::spawn_blocking(move || SqliteStore::open(&path, retention, &*clock))
                    .await
                    .map_err(|e| io::Error::other(format!("store open task failed: {e}")))?
                    .map_err(failed)?;
            Ok(Arc::new(store))
        }
        StoreUrl::Etcd(endpoints) => {
            let access = &config.etcd_access;
            let options = EtcdOptions {
                endpoints,
                prefix: config.etcd_prefix.clone(),
                retention,
                max_txn_ops: DEFAULT_MAX_TXN_OPS,
                tls: access.tls()?,
                user: access
                    .user
                    .clone()
                    .zip(access.password.as_ref().map(|p| p.expose().to_owned())),
            };
            let store = EtcdStore::connect(options, config.clock.clone()).await;
            Ok(Arc::new(store.map_err(failed)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_urls() {
        assert_eq!(
            sqlite_path("sqlite://./d/r.db").unwrap(),
            PathBuf::from("./d/r.db")
        );
        assert_eq!(
            sqlite_path("sqlite:///abs/r.db").unwrap(),
            PathBuf::from("/abs/r.db")
        );
        assert!(matches!(
            sqlite_path("etcd://h:2379"),
            Err(ServeError::UnsupportedStore(_))
        ));
        assert!(sqlite_path("sqlite://").is_err());
    }

    #[test]
    fn etcd_urls() {
        assert_eq!(
            parse_store_url("etcd://127.0.0.1:2379").unwrap(),
            StoreUrl::Etcd(vec!["127.0.0.1:2379".into()])
        );
        assert_eq!(
            parse_store_url("etcd://a:2379, b:2379/").unwrap(),
            StoreUrl::Etcd(vec!["a:2379".into(), "b:2379".into()])
        );
        assert_eq!(
            parse_store_url("sqlite://r.db").unwrap(),
            StoreUrl::Sqlite(PathBuf::from("r.db"))
        );
        for bad in ["etcd://", "etcd://a:1,,b:2", "etcd://a:1/x", "redis://h"] {
            assert!(
                matches!(parse_store_url(bad), Err(ServeError::UnsupportedStore(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn etcd_access_pairs() {
        let p = || Some(PathBuf::from("x.pem"));
        let ok = EtcdAccess {
            ca_cert: p(),
            cert: p(),
            key: p(),
            user: Some("u".into()),
            password: Some("pw".into()),
        };
        assert!(ok.validate().is_ok());
        let errs = [
            (
                EtcdAccess {
                    key: None,
                    ..ok.clone()
                },
                "--etcd-cert needs --etcd-key (the certificate's private key)",
            ),
            (
                EtcdAccess {
                    cert: None,
                    ..ok.clone()
                },
                "--etcd-key needs --etcd-cert (the client certificate)",
            ),
            (
                EtcdAccess {
                    password: None,
                    ..ok.clone()
                },
                "--etcd-user needs --etcd-password (or RINGD_ETCD_PASSWORD)",
            ),
            (
                EtcdAccess {
                    user: None,
                    ..ok.clone()
                },
                "--etcd-password needs --etcd-user",
            ),
        ];
        for (access, message) in errs {
            match access.validate() {
                Err(ServeError::EtcdAccess(m)) => assert_eq!(m, message),
                other => panic!("{other:?}"),
            }
        }
        assert!(!format!("{ok:?}").contains("pw"));
    }
}
