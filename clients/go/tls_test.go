package ringd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ringd/ringd/clients/go/ringdtest"
)

// TestFollowsOverMutualTLS follows a ring on a server that requires a
// client certificate, with the PEM files as options; without the client
// certificate the handshake fails and Ready says so.
func TestFollowsOverMutualTLS(t *testing.T) {
	p := ringdtest.NewPKI(t)
	s := startServer(t, "--tls-cert", p.ServerCert, "--tls-key", p.ServerKey, "--tls-client-ca", p.CA)
	cfg, err := tlsFromFiles(p.CA, p.ClientCert, p.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	a := api{t: t, base: s.URL, ring: "r", hc: &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}}
	a.create(map[string]any{})
	a.change(upsert("a", 1), upsert("b", 1))
	c, err := NewClient([]string{s.URL}, "r", append(fast("mtls"), WithTLSFiles(p.CA, p.ClientCert, p.ClientKey))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st := waitVersion(t, c, 2); st.Server != s.URL || s.URL[:8] != "https://" {
		t.Fatalf("status %+v", st)
	}
	assertRoutesLikeServer(t, a, c, 2, 0)

	// Trusting the CA through a *tls.Config, but with no certificate.
	pool := x509.NewCertPool()
	caPEM, _ := os.ReadFile(p.CA)
	pool.AppendCertsFromPEM(caPEM)
	anon, err := NewClient([]string{s.URL}, "r", append(fast("no-cert"), WithTLSConfig(&tls.Config{RootCAs: pool}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := anon.Ready(ctx); !errors.Is(err, ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Ready without a client certificate: %v", err)
	}
}
