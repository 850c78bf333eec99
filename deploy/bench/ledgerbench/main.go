// Command ledgerbench drives POST /v1/bookings through the gateway with
// concurrent clients of one tenant and prints postings/s and latency
// percentiles. Without -url it starts the whole platform in-process on a
// fresh database of the local Postgres server (fsync as the server has it),
// an embedded NATS server and the local Redis.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerplatform/ledger/deploy/allinone"
	"github.com/ledgerplatform/ledger/gateway/gatewayd"
	"github.com/ledgerplatform/ledger/pkg/testkit"
)

func main() {
	var (
		url      = flag.String("url", "", "gateway base URL; empty starts the platform in-process")
		key      = flag.String("key", os.Getenv("BOOTSTRAP_API_KEY"), "operator admin key when -url is given")
		pgURL    = flag.String("pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "Postgres server for the in-process platform")
		clients  = flag.Int("clients", 32, "concurrent clients")
		duration = flag.Duration("duration", 20*time.Second, "measured duration")
		warmup   = flag.Duration("warmup", 3*time.Second, "unmeasured warm-up")
		lines    = flag.Int("lines", 1, "lines per booking (each with 19 % input VAT, so 2 events per line)")
		cpuprof  = flag.String("cpuprofile", "", "write a CPU profile of the measured phase (client and in-process platform)")
		export   = flag.Int("export", 0, "after the postings, seed this many journal events into a new tenant and stream its DATEV export through the gateway (in-process platform only)")
	)
	flag.Parse()
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ledgerbench:", err)
			os.Exit(1)
		}
		defer f.Close()
		profile = f
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if *url == "" {
		var stop func()
		var err error
		*url, *key, dbURL, stop, err = startPlatform(ctx, *pgURL)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ledgerbench:", err)
			os.Exit(1)
		}
		defer stop()
	}
	if *duration > 0 {
		if err := run(*url, *key, *clients, *lines, *warmup, *duration); err != nil {
			fmt.Fprintln(os.Stderr, "ledgerbench:", err)
			os.Exit(1)
		}
	}
	if *export > 0 && dbURL != "" {
		if err := runExport(*url, *key, dbURL, *export); err != nil {
			fmt.Fprintln(os.Stderr, "ledgerbench:", err)
			os.Exit(1)
		}
	}
}

// dbURL is the in-process platform's database, for seeding.
var dbURL string

var profile *os.File

func startPlatform(ctx context.Context, pgURL string) (url, key, dbURL string, stop func(), err error) {
	name := "bench_" + testkit.RandomID()
	admin, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return "", "", "", nil, err
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", "", nil, err
	}
	var fsync, syncCommit string
	admin.QueryRow(ctx, "SHOW fsync").Scan(&fsync)
	admin.QueryRow(ctx, "SHOW synchronous_commit").Scan(&syncCommit)
	fmt.Printf("postgres: fsync=%s synchronous_commit=%s\n", fsync, syncCommit)
	dbURL = pgURL[:len(pgURL)-len("postgres?sslmode=disable")] + name + "?sslmode=disable"
	dir, err := os.MkdirTemp("", "ledgerbench")
	if err != nil {
		return "", "", "", nil, err
	}
	key = "bench-" + testkit.RandomID() + testkit.RandomID() + testkit.RandomID()
	vars := map[string]string{
		"BOOTSTRAP_API_KEY": key, "GATEWAY_ADDR": "127.0.0.1:0", "METRICS_ADDR": "127.0.0.1:0", "DATA_DIR": dir, "NATS_PORT": "-1",
		"RATE_LIMIT_PER_MINUTE": "100000000", "REDIS_KEY_PREFIX": "bench:" + testkit.RandomID() + ":",
	}
	// The rest of the environment tunes the platform (LEDGER_MAX_CONCURRENT, ...).
	cfg, err := allinone.LoadConfig(func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return os.Getenv(k)
	})
	if err != nil {
		return "", "", "", nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	go func() {
		done <- allinone.Run(runCtx, cfg, allinone.Deps{DatabaseURL: dbURL, Deps: gatewayd.Deps{Log: log, Ready: func(a string) { ready <- a }}})
	}()
	stop = func() {
		cancel()
		<-done
		os.RemoveAll(dir)
		c, err := pgx.Connect(context.Background(), pgURL)
		if err == nil {
			c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(context.Background())
		}
	}
	select {
	case a := <-ready:
		return "http://" + a, key, dbURL, stop, nil
	case err := <-done:
		stop()
		return "", "", "", nil, err
	case <-time.After(60 * time.Second):
		stop()
		return "", "", "", nil, fmt.Errorf("platform not ready within 60s")
	}
}

type client struct {
	http *http.Client
	base string
}

func (c *client) do(method, path, key string, body any, out any) (int, error) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if out != nil {
		_ = json.Unmarshal(raw, out)
	}
	if res.StatusCode >= 300 {
		return res.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	return res.StatusCode, nil
}

func run(base, adminKey string, clients, lines int, warmup, duration time.Duration) error {
	c := &client{base: base, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients * 2}}}
	var tenant struct {
		RawKey string `json:"raw_key"`
	}
	if _, err := c.do("POST", "/v1/admin/tenants", adminKey, map[string]any{"company_name": "Bench GmbH " + testkit.RandomID()}, &tenant); err != nil {
		return err
	}
	var k struct {
		RawKey string `json:"raw_key"`
	}
	if _, err := c.do("POST", "/v1/api-keys", tenant.RawKey, map[string]any{"label": "bench", "scopes": []string{"journal:write", "journal:read"}}, &k); err != nil {
		return err
	}
	booking := func(i int64) map[string]any {
		ls := make([]map[string]any, lines)
		for j := range ls {
			ls[j] = map[string]any{"account_debit": "6815", "account_credit": "1800", "amount": json.Number(fmt.Sprintf("%d.%02d", 1+i%997, i%100)), "tax_code": "VSt19"}
		}
		return map[string]any{"booking_date": "2025-03-15", "description": fmt.Sprintf("Bench %d", i), "lines": ls, "skip_duplicate_check": true}
	}
	// First posting seeds the tenant's chart outside the measurement.
	if _, err := c.do("POST", "/v1/bookings", k.RawKey, booking(0), nil); err != nil {
		return err
	}
	if profile != nil {
		time.AfterFunc(warmup, func() { pprof.StartCPUProfile(profile) })
		defer pprof.StopCPUProfile()
	}
	var seq atomic.Int64
	var errors atomic.Int64
	var firstErr atomic.Value
	measureFrom := time.Now().Add(warmup)
	end := measureFrom.Add(duration)
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := time.Now()
				if start.After(end) {
					return
				}
				_, err := c.do("POST", "/v1/bookings", k.RawKey, booking(seq.Add(1)), nil)
				if err != nil {
					errors.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				if start.After(measureFrom) {
					lat[w] = append(lat[w], time.Since(start))
				}
			}
		}()
	}
	wg.Wait()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return fmt.Errorf("no successful postings; first error: %v", firstErr.Load())
	}
	pct := func(p float64) time.Duration { return all[int(float64(len(all)-1)*p)] }
	fmt.Printf("clients=%d lines/booking=%d duration=%s\n", clients, lines, duration)
	fmt.Printf("postings=%d postings/s=%.0f events/s=%.0f errors=%d\n", len(all), float64(len(all))/duration.Seconds(), float64(len(all)*2*lines)/duration.Seconds(), errors.Load())
	fmt.Printf("latency p50=%s p90=%s p99=%s max=%s\n", pct(.50).Round(100*time.Microsecond), pct(.90).Round(100*time.Microsecond), pct(.99).Round(100*time.Microsecond), all[len(all)-1].Round(time.Millisecond))
	if e := firstErr.Load(); e != nil {
		fmt.Printf("first error: %v\n", e)
	}
	var v struct {
		OK     bool  `json:"ok"`
		Events int64 `json:"events"`
	}
	if _, err := c.do("GET", "/v1/journal/verify", k.RawKey, nil, &v); err != nil {
		return err
	}
	fmt.Printf("journal verify: ok=%v events=%d (gapless numbers, hash chain)\n", v.OK, v.Events)
	if !v.OK {
		return fmt.Errorf("hash chain does not verify")
	}
	return nil
}
