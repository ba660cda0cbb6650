// Package metrics holds kilroy-bot's Prometheus collectors.
//
// The model. Metrics is a plain value registered on a registry the
// composition root creates and serves at /metrics; nothing here touches
// Prometheus' global default registry, so tests and several servers in one
// process never collide. Each series is fed by the part of the system that
// sees the event, without that part importing Prometheus:
//
//   - kilroy_webhook_deliveries_total{event,result}: Deliveries wraps the
//     webhook's http.Handler and counts what it answered;
//   - kilroy_queue_depth and kilroy_intake_depth: read from the queue at
//     scrape time through Options.QueueDepth and Options.IntakeDepth;
//   - kilroy_webhook_body_bytes: the bytes the webhook bodies in flight hold
//     of their budget, read at scrape time (RegisterBodyBytes);
//   - kilroy_runs_total{conclusion} and
//     kilroy_node_duration_seconds{kind,status}: the engine reports through
//     attractor listeners, so Listener is one more listener of every run;
//   - kilroy_github_api_requests_total{status}: RoundTripper wraps the
//     transport the GitHub client sends with, so every attempt (retries
//     included) is counted by the status code GitHub answered;
//   - kilroy_build_info{version,revision,goversion}: always 1, so that
//     dashboards can tell which build each replica runs (Options.Build).
//
// Label values come from small fixed sets (event names, results, node kinds,
// outcome statuses, HTTP status codes): anything outside a set is counted
// as "other", because label values an unauthenticated sender can choose
// would let anyone grow the series without bound.
package metrics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Series names, for dashboards and tests.
const (
	NameDeliveries   = "kilroy_webhook_deliveries_total"
	NameQueueDepth   = "kilroy_queue_depth"
	NameIntakeDepth  = "kilroy_intake_depth"
	NameBodyBytes    = "kilroy_webhook_body_bytes"
	NameRuns         = "kilroy_runs_total"
	NameNodeDuration = "kilroy_node_duration_seconds"
	NameGitHubCalls  = "kilroy_github_api_requests_total"
	NameBuildInfo    = "kilroy_build_info"
)

// defaultDepthTimeout bounds one queue depth query during a scrape, so that
// a stuck database slows /metrics down by at most this much.
const defaultDepthTimeout = 2 * time.Second

// Options configure New.
type Options struct {
	// QueueDepth counts the runs waiting or running; nil leaves
	// kilroy_queue_depth out. It is called on every scrape.
	QueueDepth func(ctx context.Context) (int, error)
	// IntakeDepth counts the accepted deliveries not yet turned into
	// event jobs; nil leaves kilroy_intake_depth out.
	IntakeDepth func(ctx context.Context) (int, error)
	// DepthTimeout bounds each QueueDepth and IntakeDepth call (default 2s).
	DepthTimeout time.Duration
	// Build labels kilroy_build_info; empty labels read "unknown".
	Build BuildInfo
}

// BuildInfo says which build a server runs.
type BuildInfo struct {
	Version   string // module version, such as v1.2.0 or (devel)
	Revision  string // commit hash
	GoVersion string // such as go1.26.0
}

// Metrics are the collectors of one server. Methods are safe for
// concurrent use.
type Metrics struct {
	deliveries   *prometheus.CounterVec
	runs         *prometheus.CounterVec
	nodeDuration *prometheus.HistogramVec
	githubCalls  *prometheus.CounterVec
	agents       *agentSeries // usage.go
}

// New creates the collectors and registers them on reg.
func New(reg prometheus.Registerer, opts Options) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("metrics: nil registerer")
	}
	m := &Metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameDeliveries,
			Help: "Webhook deliveries by event and result (queued, duplicate, ignored, unauthorized, malformed, too_large, unavailable, error).",
		}, []string{"event", "result"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameRuns,
			Help: "Finished pipeline runs by conclusion (success, failure, cancelled).",
		}, []string{"conclusion"}),
		nodeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: NameNodeDuration,
			Help: "Duration of node attempts by node kind and outcome status; one observation per attempt, retries included.",
			// Nodes range from instant branches to hour-long agent sessions.
			Buckets: []float64{0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600},
		}, []string{"kind", "status"}),
		githubCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameGitHubCalls,
			Help: "GitHub API requests by HTTP status code (\"error\" when no response arrived); every attempt counts.",
		}, []string{"status"}),
		agents: newAgentSeries(),
	}
	cs := []prometheus.Collector{m.deliveries, m.runs, m.nodeDuration, m.githubCalls, buildInfoGauge(opts.Build)}
	cs = append(cs, m.agents.collectors()...)
	timeout := cmp.Or(opts.DepthTimeout, defaultDepthTimeout)
	if opts.QueueDepth != nil {
		cs = append(cs, &depthCollector{depth: opts.QueueDepth, timeout: timeout,
			desc: prometheus.NewDesc(NameQueueDepth, "Runs queued or running.", nil, nil)})
	}
	if opts.IntakeDepth != nil {
		cs = append(cs, &depthCollector{depth: opts.IntakeDepth, timeout: timeout,
			desc: prometheus.NewDesc(NameIntakeDepth, "Accepted webhook deliveries not yet turned into event jobs.", nil, nil)})
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: register: %w", err)
		}
	}
	return m, nil
}

// RegisterBodyBytes registers kilroy_webhook_body_bytes on reg, read from
// inFlight at scrape time: the webhook's body budget in use.
func RegisterBodyBytes(reg prometheus.Registerer, inFlight func() int64) error {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: NameBodyBytes,
		Help: "Bytes of the webhook's budget for bodies in flight in use (received plus one read ahead each).",
	}, func() float64 { return float64(inFlight()) })
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("metrics: register: %w", err)
	}
	return nil
}

// Delivery counts one webhook delivery. Unknown events and results are
// counted as "other".
func (m *Metrics) Delivery(event, result string) {
	m.deliveries.WithLabelValues(knownOr(knownEvents, event), knownOr(knownResults, result)).Inc()
}

// depthCollector asks the queue for its depth at scrape time. A failed
// query is reported as a collection error rather than a made-up number.
type depthCollector struct {
	depth   func(ctx context.Context) (int, error)
	timeout time.Duration
	desc    *prometheus.Desc
}

func (c *depthCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *depthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	n, err := c.depth(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, fmt.Errorf("depth: %w", err))
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n))
}

// buildInfoGauge is the constant kilroy_build_info series.
func buildInfoGauge(b BuildInfo) prometheus.Collector {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: NameBuildInfo,
		Help: "Always 1; its labels say which build of kilroy-bot is running.",
	}, []string{"version", "revision", "goversion"})
	g.WithLabelValues(cmp.Or(b.Version, "unknown"), cmp.Or(b.Revision, "unknown"), cmp.Or(b.GoVersion, "unknown")).Set(1)
	return g
}

// knownOr returns v when it is in set, else "other".
func knownOr(set map[string]bool, v string) string {
	if set[v] {
		return v
	}
	return "other"
}
