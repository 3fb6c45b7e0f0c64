//! Trust and identity for `https://` servers (the `tls` feature): a
//! private CA to trust besides the webpki roots, and a client certificate
//! for servers that require one (`ringd serve --tls-client-ca`).

use super::error::ClientError;

/// PEM material for TLS to ringd. Empty by default: the webpki roots are
/// trusted and no client certificate is sent.
#[derive(Clone, Default)]
pub struct TlsSettings {
    ca_certs: Vec<Vec<u8>>,
    identity: Option<Vec<u8>>,
}

impl std::fmt::Debug for TlsSettings {
    // The identity holds a private key: never print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSettings")
            .field("ca_certs", &self.ca_certs.len())
            .field("identity", &self.identity.as_ref().map(|_| "…"))
            .finish()
    }
}

impl TlsSettings {
    /// Also trusts the CA certificates in `pem` (one or more PEM blocks),
    /// e.g. the private CA that signed ringd's `--tls-cert`.
    pub fn ca_cert_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca_certs.push(pem.into());
        self
    }

    /// Presents this client certificate: `pem` holds the certificate
    /// (chain) and its private key, as PEM blocks in any order.
    pub fn identity_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.identity = Some(pem.into());
        self
    }

    /// Whether anything was set.
    pub fn is_empty(&self) -> bool {
        self.ca_certs.is_empty() && self.identity.is_none()
    }

    /// Adds the settings to an HTTP client under construction.
    pub(crate) fn apply(
        &self,
        mut builder: reqwest::ClientBuilder,
    ) -> Result<reqwest::ClientBuilder, ClientError> {
        for pem in &self.ca_certs {
            let certs = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| {
                ClientError::InvalidSetting(format!("CA certificate is not PEM: {e}"))
            })?;
            if certs.is_empty() {
                return Err(ClientError::InvalidSetting(
                    "CA certificate file holds no PEM certificate".into(),
                ));
            }
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        if let Some(pem) = &self.identity {
            let identity = reqwest::Identity::from_pem(pem).map_err(|e| {
                ClientError::InvalidSetting(format!(
                    "client certificate and key are not usable PEM: {e}"
                ))
            })?;
            builder = builder.identity(identity);
        }
        Ok(builder.use_rustls_tls())
    }
}
