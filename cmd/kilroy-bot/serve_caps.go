package main

import (
	"cmp"
	"fmt"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/queue"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
	appserver "github.com/kilroy-bot/kilroy-bot/server"
)

// Defaults of the server policy's limits: the longest a repository's run
// and node may take on this server, whatever its config says.
const (
	defaultMaxRunTimeout  = 6 * time.Hour
	defaultMaxNodeTimeout = 2 * time.Hour
	// defaultMaxPipelines bounds the pipelines of one configuration: real
	// repositories have a handful; each is loaded and checked per event.
	defaultMaxPipelines = 64
	// The checkout caps fit a large monorepo (Chromium's source tree is
	// about half a million files) and refuse what only an attack builds.
	defaultMaxCheckoutFiles = 1_000_000
	defaultMaxCheckoutBytes = 20 << 30
)

// serverLimits is the policy's `limits`: DOT durations such as 6h or 90m,
// and how many runs may go at once per installation and per repository
// across every replica (unset: queue.DefaultCaps of --workers; 0: no
// bound, the scheduler still shares the workers fairly between
// installations).
type serverLimits struct {
	MaxRunTimeout          string `yaml:"max_run_timeout"`
	MaxNodeTimeout         string `yaml:"max_node_timeout"`
	MaxRunsPerInstallation *int   `yaml:"max_runs_per_installation"`
	MaxRunsPerRepository   *int   `yaml:"max_runs_per_repository"`
	// Size caps of what a repository may ask the server to load (0: the
	// defaults, attractor.DefaultMaxNodes, DefaultMaxEdges and
	// defaultMaxPipelines).
	MaxGraphNodes int `yaml:"max_graph_nodes"`
	MaxGraphEdges int `yaml:"max_graph_edges"`
	MaxPipelines  int `yaml:"max_pipelines"`
	// The tree of a run's head, measured before checkout (0: the
	// defaults).
	MaxCheckoutFiles int64 `yaml:"max_checkout_files"`
	MaxCheckoutBytes int64 `yaml:"max_checkout_bytes"`
}

// runCaps are the limits on runs at once, for the queue's scheduler of a
// process with workers workers. The schema keeps them from being negative.
func (l serverLimits) runCaps(workers int) queue.Caps {
	c := queue.DefaultCaps(workers)
	if l.MaxRunsPerInstallation != nil {
		c.PerInstallation = *l.MaxRunsPerInstallation
	}
	if l.MaxRunsPerRepository != nil {
		c.PerRepository = *l.MaxRunsPerRepository
	}
	return c
}

// caps parses the limits, with the defaults for those not given; loc
// places an invalid duration in the policy file.
func (l serverLimits) caps(loc *policy.Located) (appserver.Caps, error) {
	run, err := maxDuration(l.MaxRunTimeout, defaultMaxRunTimeout, loc, "max_run_timeout")
	if err != nil {
		return appserver.Caps{}, err
	}
	node, err := maxDuration(l.MaxNodeTimeout, defaultMaxNodeTimeout, loc, "max_node_timeout")
	if err != nil {
		return appserver.Caps{}, err
	}
	pipelines := l.MaxPipelines
	if pipelines == 0 {
		pipelines = defaultMaxPipelines
	}
	checkout := gitops.TreeLimits{MaxFiles: cmp.Or(l.MaxCheckoutFiles, defaultMaxCheckoutFiles),
		MaxBytes: cmp.Or(l.MaxCheckoutBytes, defaultMaxCheckoutBytes)}
	return appserver.Caps{MaxRunTimeout: run, MaxNodeTimeout: node, MaxPipelines: pipelines, Checkout: checkout,
		Graph: attractor.GraphCaps{MaxNodes: l.MaxGraphNodes, MaxEdges: l.MaxGraphEdges}}, nil
}

func maxDuration(s string, def time.Duration, loc *policy.Located, key string) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := attractor.ParseDuration(s)
	if err == nil && d <= 0 {
		err = fmt.Errorf("%q is not a positive duration", s)
	}
	if err == nil {
		return d, nil
	}
	if loc == nil {
		return 0, fmt.Errorf("limits.%s: %w (write a duration such as 6h or 90m)", key, err)
	}
	return 0, loc.Errorf([]string{"limits", key}, "%v (write a duration such as 6h or 90m)", err)
}
