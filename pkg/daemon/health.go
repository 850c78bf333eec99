package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ledgerplatform/ledger/pkg/outbox"
)

// serveHealth answers /readyz and /metrics on addr until stop is called.
// Requests to the service travel over NATS, so this listener exists only
// for probes and scrapers: a relay that cannot publish makes the service
// unready without stopping it from answering.
func serveHealth(addr, name string, relay *outbox.Relay, log *slog.Logger) (stop func(), err error) {
	reg := prometheus.NewRegistry()
	if relay != nil {
		labels := prometheus.Labels{"service": name}
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "outbox_pending_events", ConstLabels: labels,
				Help: "Events in the outbox not yet acknowledged by JetStream, as of the relay's last look."},
				func() float64 { return float64(relay.Status().Pending) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "outbox_oldest_pending_seconds", ConstLabels: labels,
				Help: "Age of the oldest event in the outbox; 0 when it is empty."},
				func() float64 {
					if o := relay.Status().Oldest; !o.IsZero() {
						return time.Since(o).Seconds()
					}
					return 0
				}),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "outbox_publish_failing_seconds", ConstLabels: labels,
				Help: "How long the relay has failed to publish; 0 while it publishes."},
				func() float64 {
					if st := relay.Status(); st.Err != nil {
						return time.Since(st.Since).Seconds()
					}
					return 0
				}),
		)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if relay != nil {
			if err := relay.Healthy(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_ = json.NewEncoder(w).Encode(map[string]any{"status": "unavailable", "problems": []string{err.Error()}})
				return
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ready"})
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health listener %s: %w", addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("health listener stopped", "addr", addr, "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
