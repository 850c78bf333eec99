package gateway

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

type metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	auditFailures prometheus.Counter
	auditPending  prometheus.Gauge
	rateLimited   prometheus.Counter
	limiterErrors prometheus.Counter
	// revocationErrors counts revoking calls answered without a new
	// revocation epoch.
	revocationErrors prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_http_requests_total", Help: "Calls by surface (api or mcp), route and status; an MCP tool call counts under its route.",
		}, []string{"surface", "method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gateway_http_request_duration_seconds", Help: "Call latency by surface and route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"surface", "method", "route"}),
		auditFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gateway_audit_publish_failures_total", Help: "Audit publishes JetStream did not acknowledge (each is retried).",
		}),
		auditPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gateway_audit_pending_records", Help: "Audit records waiting for JetStream's acknowledgement; at the bound new calls get 503.",
		}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gateway_rate_limited_total", Help: "Requests refused with 429.",
		}),
		limiterErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gateway_rate_limiter_errors_total", Help: "Calls let through unlimited because the rate limiter (Redis) failed.",
		}),
		revocationErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gateway_revocation_epoch_errors_total", Help: "Revoking calls answered without a new revocation epoch in Redis; other replicas then rely on identity's event.",
		}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.auditFailures, m.auditPending, m.rateLimited, m.limiterErrors, m.revocationErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
