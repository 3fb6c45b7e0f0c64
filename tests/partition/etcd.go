package partition

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/ioutil"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EtcdBinary is Debian's etcd (3.4), as the other etcd tests use.
const EtcdBinary = "/usr/bin/etcd"

// StartEtcd starts the three members, each in its namespace, peers on the
// peer network and clients on the client network, with data under
// dataDir and logs in logDir.
func StartEtcd(dataDir, logDir, token string) ([]*Proc, error) {
	var initial []string
	for _, m := range Members {
		initial = append(initial, m.Name+"="+m.PeerURL())
	}
	var started []*Proc
	for _, m := range Members {
		args := []string{
			"--name=" + m.Name,
			"--data-dir=" + filepath.Join(dataDir, m.Name),
			"--listen-peer-urls=" + m.PeerURL(),
			"--initial-advertise-peer-urls=" + m.PeerURL(),
			"--listen-client-urls=" + m.ClientURL(),
			"--advertise-client-urls=" + m.ClientURL(),
			"--initial-cluster=" + strings.Join(initial, ","),
			"--initial-cluster-state=new",
			"--initial-cluster-token=" + token,
			// etcd 3.5's default: a member that was cut off does not force
			// an election when it comes back, so a heal disturbs the cluster
			// no more than it would in production.
			"--pre-vote=true",
			"--logger=zap",
			"--log-level=warn",
		}
		p, _, err := StartProc("etcd "+m.Name, m.NS(), filepath.Join(logDir, "etcd-"+m.Name+".log"), childEnv(), false, EtcdBinary, args...)
		if err != nil {
			return started, err
		}
		started = append(started, p)
	}
	return started, nil
}

// u64 reads etcd's JSON gateway's 64-bit numbers, which it writes as
// strings (and leaves out when zero).
type u64 uint64

func (u *u64) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*u = 0
		return nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	*u = u64(v)
	return err
}

// MemberStatus is what a member says of itself: POST /v3/maintenance/status.
type MemberStatus struct {
	MemberID  uint64
	Leader    uint64 // 0: it knows no leader
	RaftTerm  uint64
	RaftIndex uint64
}

// IsLeader says whether the member reports itself the leader.
func (s MemberStatus) IsLeader() bool { return s.Leader != 0 && s.Leader == s.MemberID }

// etcdPost sends a JSON body to one member's gateway and decodes the answer.
func etcdPost(ctx context.Context, client *http.Client, m EtcdMember, path string, body, into interface{}) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest("POST", m.ClientURL()+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req = req.WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := ioutil.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", m.Name, path, resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(raw, into)
}

// Status asks member m for its status.
func Status(ctx context.Context, client *http.Client, m EtcdMember) (MemberStatus, error) {
	var s struct {
		Header struct {
			MemberID u64 `json:"member_id"`
		} `json:"header"`
		Leader    u64 `json:"leader"`
		RaftTerm  u64 `json:"raftTerm"`
		RaftIndex u64 `json:"raftIndex"`
	}
	if err := etcdPost(ctx, client, m, "/v3/maintenance/status", struct{}{}, &s); err != nil {
		return MemberStatus{}, err
	}
	return MemberStatus{
		MemberID:  uint64(s.Header.MemberID),
		Leader:    uint64(s.Leader),
		RaftTerm:  uint64(s.RaftTerm),
		RaftIndex: uint64(s.RaftIndex),
	}, nil
}

// AgreedLeader asks every member for its status; it returns the leader's
// index and every member's id when all three answer and name the same
// leader, which reports itself the leader.
func AgreedLeader(ctx context.Context, client *http.Client) (int, []uint64, error) {
	ids := make([]uint64, len(Members))
	var leader uint64
	leaderIndex := -1
	for i, m := range Members {
		s, err := Status(ctx, client, m)
		if err != nil {
			return -1, nil, err
		}
		if s.Leader == 0 {
			return -1, nil, fmt.Errorf("%s knows no leader", m.Name)
		}
		if leader != 0 && s.Leader != leader {
			return -1, nil, fmt.Errorf("%s names leader %x, another member %x", m.Name, s.Leader, leader)
		}
		leader = s.Leader
		ids[i] = s.MemberID
		if s.IsLeader() {
			leaderIndex = i
		}
	}
	if leaderIndex < 0 {
		return -1, nil, fmt.Errorf("no member reports itself the leader %x", leader)
	}
	return leaderIndex, ids, nil
}

// WaitAgreedLeader polls AgreedLeader until it succeeds or limit passes.
func WaitAgreedLeader(client *http.Client, limit time.Duration) (int, []uint64, error) {
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		leader, ids, err := AgreedLeader(ctx, client)
		cancel()
		if err == nil {
			return leader, ids, nil
		}
		if time.Now().After(deadline) {
			return -1, nil, fmt.Errorf("etcd did not agree on a leader within %v: %v", limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// MoveLeader makes member target the leader (through the current leader),
// then waits until every member agrees on it.
func MoveLeader(client *http.Client, target int) error {
	leader, ids, err := WaitAgreedLeader(client, SteadyLimit)
	if err != nil {
		return err
	}
	if leader == target {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body := map[string]string{"targetID": strconv.FormatUint(ids[target], 10)}
	if err := etcdPost(ctx, client, Members[leader], "/v3/maintenance/transfer-leadership", body, nil); err != nil {
		return err
	}
	now, _, err := WaitAgreedLeader(client, SteadyLimit)
	if err != nil {
		return err
	}
	if now != target {
		return fmt.Errorf("moved the lead to %s, but %s leads", Members[target].Name, Members[now].Name)
	}
	return nil
}
