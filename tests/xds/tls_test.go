package xds

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/ringd/ringd/clients/go/ringdtest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/xds"

	discoverypb "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// TestTheXDSPortServesMutualTLS: with the HTTP API's certificate and
// client CA, grpc-go's xDS client follows the ring over TLS with its
// client certificate (bootstrap channel_creds "tls"), and a client
// without a certificate cannot open a stream.
func TestTheXDSPortServesMutualTLS(t *testing.T) {
	pki := ringdtest.NewPKI(t)
	// The test's own HTTP calls need the client certificate too.
	cert, err := tls.LoadX509KeyPair(pki.ClientCert, pki.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	transport := http.DefaultTransport.(*http.Transport)
	saved := transport.TLSClientConfig
	transport.TLSClientConfig = &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}}
	t.Cleanup(func() { transport.TLSClientConfig = saved })

	s := ringdtest.Start(t, "--xds-listen", "127.0.0.1:0",
		"--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey, "--tls-client-ca", pki.CA)
	r, v := ringOfBackends(t, s, "cache", 5)

	bootstrap := fmt.Sprintf(`{"xds_servers":[{"server_uri":%q,"channel_creds":[{"type":"tls","config":{"ca_certificate_file":%q,"certificate_file":%q,"private_key_file":%q}}],"server_features":["xds_v3"]}],"node":{"id":"tls-1"}}`,
		s.XDS, pki.CA, pki.ClientCert, pki.ClientKey)
	resolver, err := xds.NewXDSResolverWithConfigForTesting([]byte(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient("xds:///cache", grpc.WithTransportCredentials(insecureBackends()), grpc.WithResolvers(resolver))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	keys := make([]string, 2000)
	for i := range keys {
		keys[i] = fmt.Sprintf("tls-%d", i)
	}
	got := route(t, testgrpc.NewTestServiceClient(cc), keys)
	want := owners(t, r, v, keys)
	for i := range keys {
		if got[i] != want[i] {
			t.Fatalf("key %q went to %s, ringd's owner is %s", keys[i], got[i], want[i])
		}
	}
	waitAck(t, r, "tls-1", v)

	// Trusting the server, but without a client certificate.
	anonymous, err := grpc.NewClient(s.XDS, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = anonymous.Close() })
	stream, err := discoverypb.NewAggregatedDiscoveryServiceClient(anonymous).StreamAggregatedResources(t.Context())
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("a stream without a client certificate: %v, want Unavailable", err)
	}
}
