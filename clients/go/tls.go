package ringd

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// WithTLSConfig uses cfg for https:// servers: its RootCAs to trust a
// private CA, its Certificates for mutual TLS (ringd serve
// --tls-client-ca). It is cloned; nil means the system roots.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(s *settings) {
		if cfg != nil {
			s.tls = cfg.Clone()
		}
	}
}

// WithTLSFiles reads PEM files for https:// servers: caFile, if not "",
// holds the CA certificates to trust instead of the system roots;
// certFile and keyFile, if not "", the client certificate (chain) and
// its key for mutual TLS. A file that does not load makes NewClient or
// NewMember fail with ErrInvalidOption.
func WithTLSFiles(caFile, certFile, keyFile string) Option {
	return func(s *settings) {
		cfg, err := tlsFromFiles(caFile, certFile, keyFile)
		if err != nil {
			s.tlsErr = err
			return
		}
		s.tls = cfg
	}
}

func tlsFromFiles(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, invalidOption("CA certificate: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, invalidOption("CA certificate file %s holds no PEM certificate", caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, invalidOption("a client certificate needs both its certificate and its key file")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			// The key's contents never reach the message.
			return nil, invalidOption("client certificate %s and key %s: %v", certFile, keyFile, fmt.Sprint(err))
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
