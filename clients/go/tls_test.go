package ringd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// pki is a throwaway CA with a server and a client certificate, as PEM
// files in dir.
type pki struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	write := func(name, kind string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ringd test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage) ([]byte, []byte) {
		k := key()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "localhost"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kDER, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return der, kDER
	}
	sc, sk := leaf(2, x509.ExtKeyUsageServerAuth)
	cc, ck := leaf(3, x509.ExtKeyUsageClientAuth)
	return pki{
		ca:         write("ca.pem", "CERTIFICATE", caDER),
		serverCert: write("server.pem", "CERTIFICATE", sc), serverKey: write("server.key", "PRIVATE KEY", sk),
		clientCert: write("client.pem", "CERTIFICATE", cc), clientKey: write("client.key", "PRIVATE KEY", ck),
	}
}

// TestFollowsOverMutualTLS follows a ring on a server that requires a
// client certificate, with the PEM files as options; without the client
// certificate the handshake fails and Ready says so.
func TestFollowsOverMutualTLS(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, "--tls-cert", p.serverCert, "--tls-key", p.serverKey, "--tls-client-ca", p.ca)
	cfg, err := tlsFromFiles(p.ca, p.clientCert, p.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	a := api{t: t, base: s.URL, ring: "r", hc: &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}}
	a.create(map[string]any{})
	a.change(upsert("a", 1), upsert("b", 1))
	c, err := NewClient([]string{s.URL}, "r", append(fast("mtls"), WithTLSFiles(p.ca, p.clientCert, p.clientKey))...)
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
	caPEM, _ := os.ReadFile(p.ca)
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
