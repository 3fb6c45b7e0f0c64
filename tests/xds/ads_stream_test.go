package xds

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	corepb "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoverypb "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// Type URLs of the resources ringd serves.
const (
	listenerType  = "type.googleapis.com/envoy.config.listener.v3.Listener"
	clusterType   = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	endpointsType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
)

// adsStream is one ADS stream opened by hand, for what a real proxy does
// only when it is broken or refuses a resource: a NACK, no node id, a
// wrong token.
type adsStream struct {
	t      testing.TB
	stream discoverypb.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	node   *corepb.Node
	// responses holds what the stream received, read by one goroutine so
	// that a wait that times out loses nothing.
	responses chan received
}

type received struct {
	r   *discoverypb.DiscoveryResponse
	err error
}

// connOf is a plain gRPC connection to addr, closed when the test ends.
func connOf(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// openADS opens a stream to addr as node nodeID (none when empty), with
// token as `authorization: Bearer` metadata when set.
func openADS(t testing.TB, addr, nodeID, token string) *adsStream {
	t.Helper()
	cc := connOf(t, addr)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	stream, err := discoverypb.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := &adsStream{t: t, stream: stream, responses: make(chan received, 64)}
	if nodeID != "" {
		s.node = &corepb.Node{Id: nodeID}
	}
	go func() {
		for {
			r, err := stream.Recv()
			s.responses <- received{r, err}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// send asks for names of typeURL, answering the response of nonce with
// version (an ACK), or with nack as the error (a NACK).
func (s *adsStream) send(typeURL string, names []string, version, nonce, nack string) {
	s.t.Helper()
	req := &discoverypb.DiscoveryRequest{
		Node: s.node, TypeUrl: typeURL, ResourceNames: names,
		VersionInfo: version, ResponseNonce: nonce,
	}
	if nack != "" {
		req.ErrorDetail = &statuspb.Status{Code: int32(codes.InvalidArgument), Message: nack}
	}
	// io.EOF says the server has ended the stream (refused it, say); its
	// status is what the next recv returns.
	if err := s.stream.Send(req); err != nil && !errors.Is(err, io.EOF) {
		s.t.Fatal(err)
	}
}

// recv waits up to 10 s for the next response, failing the test then.
func (s *adsStream) recv() (*discoverypb.DiscoveryResponse, error) {
	s.t.Helper()
	r, err := s.recvWithin(10 * time.Second)
	if r == nil && err == nil {
		s.t.Fatal("no xDS response within 10 s")
	}
	return r, err
}

// recvWithin waits up to d for the next response; nil and no error when
// none came.
func (s *adsStream) recvWithin(d time.Duration) (*discoverypb.DiscoveryResponse, error) {
	select {
	case got := <-s.responses:
		return got.r, got.err
	case <-time.After(d):
		return nil, nil
	}
}

// must is recv that fails the test on an error, and on a response of
// another type.
func (s *adsStream) must(typeURL string) *discoverypb.DiscoveryResponse {
	s.t.Helper()
	r, err := s.recv()
	if err != nil {
		s.t.Fatalf("xDS stream: %v", err)
	}
	if r.GetTypeUrl() != typeURL {
		s.t.Fatalf("got a response of %s, want %s", r.GetTypeUrl(), typeURL)
	}
	return r
}
