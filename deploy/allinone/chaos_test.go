//go:build chaos

package allinone_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgerplatform/ledger/contracts/gatewayv1"
	"github.com/ledgerplatform/ledger/contracts/ledgerv1"
	"github.com/ledgerplatform/ledger/deploy/allinone"
	"github.com/ledgerplatform/ledger/gateway/gatewayd"
	"github.com/ledgerplatform/ledger/pkg/natsauth"
	"github.com/ledgerplatform/ledger/pkg/testkit"
	identitypg "github.com/ledgerplatform/ledger/services/identity/postgres"
	ledgerpg "github.com/ledgerplatform/ledger/services/ledger/postgres"
	periodspg "github.com/ledgerplatform/ledger/services/periods/postgres"
	reportingpg "github.com/ledgerplatform/ledger/services/reporting/postgres"
)

// TestChaos runs the platform on a 3-node NATS cluster of real processes
// (deploy/chaos/natsnode) with streams of 3 replicas, which admits only the
// platform's NKEYs with the permissions of natsauth.Table (the rendering
// every deployment uses) and refuses anonymous connections, posts bookings through
// the gateway without pause, and kills one node after another with SIGKILL
// for 10 s: first the leader of the ledger's stream, then the leader of the
// gateway's audit stream, then any node not killed yet; last two nodes at
// once, so no stream has a quorum for 10 s. Afterwards nothing
// may be missing: every intent has its intent_posted event in the stream
// (exactly one), every answered call its audit row, every outbox is empty
// and every durable consumer has caught up; and no node refused the
// platform a publish or subscription.
//
// It is `make chaos` (build tag chaos): about two minutes on two cores.
func TestChaos(t *testing.T) {
	c := startCluster(t, 3)
	ctx := context.Background()
	c.refusesAnonymous(t)

	// A stream made before replicas were configured is raised to 3.
	if _, err := c.js.CreateStream(ctx, jetstream.StreamConfig{Name: ledgerv1.StreamEvents, Subjects: []string{ledgerv1.EventsFilter}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	p := startPlatformOnCluster(t, c, env{"RATE_LIMIT_PER_MINUTE": "1000000", "REQUEST_TIMEOUT": "10s"})
	for _, name := range c.streams(t) {
		if r := c.info(t, name).Config.Replicas; r != 3 {
			t.Fatalf("stream %s has %d replicas, want 3", name, r)
		}
	}
	admin, tenant := p.newTenant("Chaos GmbH")
	writer := p.apiKey(admin, "journal:write", "journal:read")

	// Load: postings without pause until the faults are over.
	load := &chaosLoad{statuses: map[int]int{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := bookingBody(fmt.Sprintf("2025-%02d-%02d", 1+i%12, 1+w), fmt.Sprintf("Chaos %d/%d", w, i), bline("6815", "1800", fmt.Sprintf("%d.%02d", 1+i, w)))
				r, err := p.send("POST", "/v1/bookings", writer, body)
				load.add(r, err)
			}
		})
	}

	time.Sleep(3 * time.Second)
	killed := map[string]bool{}
	victims := []func() string{
		func() string { return c.leader(t, ledgerv1.StreamEvents) },
		func() string { return c.leader(t, gatewayv1.StreamCalls) },
	}
	for len(killed) < len(c.nodes) {
		var name string
		if len(victims) > 0 {
			name, victims = victims[0](), victims[1:]
		} else {
			for _, n := range c.nodes {
				if !killed[n.name] {
					name = n.name
					break
				}
			}
		}
		killed[name] = true
		n := c.node(name)
		t.Logf("SIGKILL %s (LEDGER leader %s, GATEWAY leader %s), %d calls answered so far", name,
			c.leader(t, ledgerv1.StreamEvents), c.leader(t, gatewayv1.StreamCalls), load.answered())
		n.kill(t)
		time.Sleep(10 * time.Second)
		n.start(t)
		c.waitCurrent(t, 60*time.Second)
	}
	// Then a majority at once: nothing is acknowledged for 10 s, so every
	// publisher must wait with a deadline and try again.
	first := c.leader(t, ledgerv1.StreamEvents)
	second := c.leader(t, gatewayv1.StreamCalls)
	if second == first {
		second = c.nodes[(slices.IndexFunc(c.nodes, func(n *natsNode) bool { return n.name == first })+1)%len(c.nodes)].name
	}
	t.Logf("SIGKILL %s and %s together, %d calls answered so far", first, second, load.answered())
	c.node(first).kill(t)
	c.node(second).kill(t)
	time.Sleep(10 * time.Second)
	c.node(first).start(t)
	c.node(second).start(t)
	c.waitCurrent(t, 60*time.Second)
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	c.refusesAnonymous(t) // restarted nodes too

	ids, statuses, transport := load.result()
	t.Logf("%d calls answered by status %v; %d transport errors", len(ids), statuses, len(transport))
	if len(transport) > 0 {
		t.Errorf("the gateway did not answer %d calls, first: %v", len(transport), transport[0])
	}
	if statuses[201] < 100 {
		t.Fatalf("only %d postings succeeded: the platform did not work on the cluster", statuses[201])
	}

	// Everything must arrive.
	eventually(t, 90*time.Second, func() error {
		var problems []string
		for _, schema := range outboxSchemas(t, p.owner) {
			if n := count(t, p.owner, "SELECT count(*) FROM "+schema+".outbox"); n > 0 {
				problems = append(problems, fmt.Sprintf("%s.outbox holds %d rows", schema, n))
			}
		}
		for _, stream := range c.streams(t) {
			for _, ci := range c.consumers(t, stream) {
				if ci.NumPending > 0 || ci.NumAckPending > 0 {
					problems = append(problems, fmt.Sprintf("consumer %s/%s: %d pending, %d unacknowledged", stream, ci.Name, ci.NumPending, ci.NumAckPending))
				}
			}
		}
		if n := count(t, p.owner, "SELECT count(*) FROM identity.audit_log WHERE request_id = ANY($1)", ids); n != len(ids) {
			problems = append(problems, fmt.Sprintf("%d of %d answered calls have an audit row", n, len(ids)))
		}
		if len(problems) > 0 {
			return errors.New(strings.Join(problems, "; "))
		}
		return nil
	})
	intents := count(t, p.owner, "SELECT count(*) FROM ledger.intents WHERE tenant_id = $1", tenant)
	s, err := c.js.Stream(ctx, ledgerv1.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(ledgerv1.EventIntentPosted))
	if err != nil {
		t.Fatal(err)
	}
	all := count(t, p.owner, "SELECT count(*) FROM ledger.intents")
	if got := info.State.Subjects[ledgerv1.EventIntentPosted]; got != uint64(all) {
		t.Errorf("the stream holds %d intent_posted events for %d journal intents", got, all)
	}
	if intents < statuses[201] {
		t.Errorf("%d intents in the journal, but %d postings were answered 201", intents, statuses[201])
	}
	t.Logf("%d intents posted, %d intent_posted events", intents, info.State.Subjects[ledgerv1.EventIntentPosted])
	c.noViolations(t)
}

// chaosLoad collects what the load saw.
type chaosLoad struct {
	mu        sync.Mutex
	ids       []string
	statuses  map[int]int
	transport []error
}

func (l *chaosLoad) add(r resp, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.transport = append(l.transport, err)
		return
	}
	l.statuses[r.Status]++
	l.ids = append(l.ids, r.Header.Get("X-Request-Id"))
}

func (l *chaosLoad) answered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ids)
}

func (l *chaosLoad) result() ([]string, map[int]int, []error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ids, l.statuses, l.transport
}

func outboxSchemas(t testing.TB, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT table_schema FROM information_schema.tables WHERE table_name = 'outbox' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// startPlatformOnCluster is startPlatform with the cluster for NATS, every
// part logging in with its own key of the cluster's, and streams of 3
// replicas.
func startPlatformOnCluster(t *testing.T, c *cluster, overrides env) *platform {
	t.Helper()
	dbURL := testkit.Postgres(t, identitypg.Migrations, ledgerpg.Migrations, periodspg.Migrations, reportingpg.Migrations)
	rdb, prefix := testkit.Redis(t)
	key := "bootstrap-" + testkit.RandomID() + testkit.RandomID() + testkit.RandomID()
	vars := env{
		"BOOTSTRAP_API_KEY":    key,
		"GATEWAY_ADDR":         "127.0.0.1:0",
		"METRICS_ADDR":         "127.0.0.1:0", // two runs on one machine must not collide
		"REDIS_KEY_PREFIX":     prefix,
		"NATS_STREAM_REPLICAS": "3",
		"DATA_DIR":             t.TempDir(), // the ledger's checkpoint key
	}
	cfg := platformConfig(t, vars, overrides)
	addr := make(chan string, 1)
	done := runUntilCleanup(t, cfg, allinone.Deps{DatabaseURL: dbURL, NATSURL: c.url, Keys: c.keys, Deps: gatewayd.Deps{Redis: rdb, Log: testLogger(t), Ready: func(a string) { addr <- a }}}, 30*time.Second)
	p := &platform{t: t, nc: c.nc}
	select {
	case a := <-addr:
		p.base, p.key = "http://"+a, key
	case err := <-done:
		t.Fatalf("platform failed to start: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("platform not ready within 90s")
	}
	var err error
	if p.owner, err = pgxpool.New(context.Background(), dbURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.owner.Close)
	return p
}

// cluster is n natsnode processes routed to each other. They admit the
// users of natsauth.Table with keys, and the harness (nc) with every
// permission.
type cluster struct {
	nodes []*natsNode
	url   string // every node's client URL, comma-separated
	keys  natsauth.Keys
	nc    *nats.Conn // the harness's connection
	js    jetstream.JetStream
}

type natsNode struct {
	name, clientAddr string
	bin              string
	args             []string
	env              []string
	log              string
	cmd              *exec.Cmd
}

func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "natsnode")
	gobin := "go"
	if g := os.Getenv("GO"); g != "" {
		gobin = g
	}
	if out, err := exec.Command(gobin, "build", "-o", bin, "../chaos/natsnode").CombinedOutput(); err != nil {
		t.Fatalf("build natsnode: %v\n%s", err, out)
	}
	// The authorization of every deployment (deploy/nats/auth.conf): the
	// users of natsauth.Table, public keys from NKEY_<NAME>.
	keys, err := natsauth.Generate()
	if err != nil {
		t.Fatal(err)
	}
	harness, err := natsauth.NewKey("harness")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "auth.conf")
	if err := os.WriteFile(conf, []byte(natsauth.Conf()), 0o644); err != nil {
		t.Fatal(err)
	}
	nodeEnv := os.Environ()
	for _, name := range natsauth.Names() {
		nodeEnv = append(nodeEnv, natsauth.EnvPublicKey(name)+"="+keys[name].Public())
	}
	ports := freePorts(t, 2*n)
	var routes, urls []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[n+i]))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	c := &cluster{url: strings.Join(urls, ","), keys: keys}
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		node := &natsNode{name: name, bin: bin, clientAddr: fmt.Sprintf("127.0.0.1:%d", ports[i]), env: nodeEnv, log: filepath.Join(dir, name+".log")}
		node.args = []string{"-config", conf, "-harness-nkey", harness.Public(), "-name", name, "-listen", node.clientAddr, "-cluster", fmt.Sprintf("127.0.0.1:%d", ports[n+i]),
			"-routes", strings.Join(routes, ","), "-store", filepath.Join(dir, name)}
		node.start(t)
		c.nodes = append(c.nodes, node)
	}
	t.Cleanup(func() {
		for _, node := range c.nodes {
			node.stop()
		}
		if t.Failed() {
			for _, node := range c.nodes {
				b, _ := os.ReadFile(node.log)
				t.Logf("%s log (tail):\n%s", node.name, tail(string(b), 3000))
			}
		}
	})
	if c.nc, err = harness.Connect(c.url, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.nc.Close)
	if c.js, err = jetstream.New(c.nc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := c.js.AccountInfo(ctx)
		return err
	})
	return c
}

func (n *natsNode) start(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(n.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n.cmd = exec.Command(n.bin, n.args...)
	n.cmd.Env = n.env
	n.cmd.Stdout, n.cmd.Stderr = f, f
	if err := n.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", n.name, err)
	}
	eventually(t, 30*time.Second, func() error {
		conn, err := net.DialTimeout("tcp", n.clientAddr, time.Second)
		if err == nil {
			conn.Close()
		}
		return err
	})
}

func (n *natsNode) kill(t *testing.T) {
	t.Helper()
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s: %v", n.name, err)
	}
	_ = n.cmd.Wait()
}

func (n *natsNode) stop() {
	if n.cmd == nil || n.cmd.ProcessState != nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = n.cmd.Process.Kill()
		<-done
	}
}

// refusesAnonymous checks that every node refuses a connection without a
// key: the cluster runs with authentication, as every deployment does.
func (c *cluster) refusesAnonymous(t *testing.T) {
	t.Helper()
	for _, n := range c.nodes {
		nc, err := nats.Connect("nats://"+n.clientAddr, nats.NoReconnect(), nats.Timeout(5*time.Second))
		if err == nil {
			nc.Close()
			t.Errorf("%s admitted an anonymous connection", n.name)
		} else if !errors.Is(err, nats.ErrAuthorization) {
			t.Errorf("%s: anonymous connection failed with %v, want %v", n.name, err, nats.ErrAuthorization)
		}
	}
}

// noViolations checks that no node refused a publish or subscription: the
// permissions of natsauth.Table allow everything the platform does.
func (c *cluster) noViolations(t *testing.T) {
	t.Helper()
	for _, n := range c.nodes {
		b, err := os.ReadFile(n.log)
		if err != nil {
			t.Fatal(err)
		}
		var refused []string
		for line := range strings.Lines(string(b)) {
			if strings.Contains(line, "Violation - ") {
				refused = append(refused, strings.TrimSpace(line))
			}
		}
		if len(refused) > 0 {
			t.Errorf("%s refused %d times, first: %s", n.name, len(refused), strings.Join(refused[:min(5, len(refused))], "\n"))
		}
	}
}

func (c *cluster) node(name string) *natsNode {
	for _, n := range c.nodes {
		if n.name == name {
			return n
		}
	}
	panic("no node " + name)
}

func (c *cluster) info(t *testing.T, stream string) *jetstream.StreamInfo {
	t.Helper()
	var info *jetstream.StreamInfo
	c.withStream(t, stream, 2*time.Second, func(ctx context.Context, s jetstream.Stream) (err error) {
		info, err = s.Info(ctx)
		return err
	})
	return info
}

// withStream calls f with stream until it succeeds (for 30 s), each try
// with a context of timeout.
func (c *cluster) withStream(t *testing.T, stream string, timeout time.Duration, f func(context.Context, jetstream.Stream) error) {
	t.Helper()
	eventually(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		s, err := c.js.Stream(ctx, stream)
		if err != nil {
			return err
		}
		return f(ctx, s)
	})
}

// leader is the server leading stream; it waits for an election.
func (c *cluster) leader(t *testing.T, stream string) string {
	t.Helper()
	var leader string
	eventually(t, 30*time.Second, func() error {
		info := c.info(t, stream)
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return fmt.Errorf("stream %s has no leader", stream)
		}
		leader = info.Cluster.Leader
		return nil
	})
	return leader
}

// waitCurrent waits until every stream has a leader and every replica is
// online and current, so the next fault hits a whole cluster.
func (c *cluster) waitCurrent(t *testing.T, within time.Duration) {
	t.Helper()
	eventually(t, within, func() error {
		for _, name := range c.streams(t) {
			info := c.info(t, name)
			if info.Cluster == nil || info.Cluster.Leader == "" {
				return fmt.Errorf("stream %s has no leader", name)
			}
			for _, r := range info.Cluster.Replicas {
				if r.Offline || !r.Current {
					return fmt.Errorf("stream %s: replica %s not current", name, r.Name)
				}
			}
		}
		return nil
	})
}

func (c *cluster) streams(t *testing.T) []string {
	t.Helper()
	var names []string
	eventually(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		names = names[:0]
		l := c.js.StreamNames(ctx)
		for n := range l.Name() {
			names = append(names, n)
		}
		return l.Err()
	})
	return names
}

func (c *cluster) consumers(t *testing.T, stream string) []*jetstream.ConsumerInfo {
	t.Helper()
	var out []*jetstream.ConsumerInfo
	c.withStream(t, stream, 5*time.Second, func(ctx context.Context, s jetstream.Stream) error {
		out = out[:0]
		l := s.ListConsumers(ctx)
		for ci := range l.Info() {
			out = append(out, ci)
		}
		return l.Err()
	})
	return out
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
