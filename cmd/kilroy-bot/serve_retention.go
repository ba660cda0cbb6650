package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/gc"
	appserver "github.com/kilroy-bot/kilroy-bot/server"
)

// serverRetention is the policy's `retention`: how long what finished runs
// leave is kept, and how often serve sweeps. Each value is a duration or
// off (keep forever).
type serverRetention struct {
	Runs           string `yaml:"runs"`            // run directories; default 14d
	Branches       string `yaml:"branches"`        // run branches in the mirrors; default 14d
	RemoteBranches string `yaml:"remote_branches"` // run branches on GitHub; default off
	Mirrors        string `yaml:"mirrors"`         // unused mirrors; default 30d
	Caches         string `yaml:"caches"`          // unused repository caches; default 30d
	Every          string `yaml:"every"`           // time between sweeps; default 1h
	Images         string `yaml:"images"`          // unpacked images no run used; default 7d (serve_images.go)
}

// defaultRetentionEvery is the time between sweeps.
const defaultRetentionEvery = time.Hour

// options parses the setting; loc places an invalid value in the policy
// file (nil: the message names the key only).
func (r serverRetention) options(loc *policy.Located) (ret gc.Retention, every time.Duration, err error) {
	def := gc.DefaultRetention()
	for _, f := range []struct {
		key string
		val string
		def time.Duration
		dst *time.Duration
	}{
		{"runs", r.Runs, def.Runs, &ret.Runs},
		{"branches", r.Branches, def.Branches, &ret.Branches},
		{"remote_branches", r.RemoteBranches, 0, &ret.RemoteBranches},
		{"mirrors", r.Mirrors, def.Mirrors, &ret.Mirrors},
		{"caches", r.Caches, def.Caches, &ret.Caches},
		{"every", r.Every, defaultRetentionEvery, &every},
	} {
		if *f.dst, err = retentionDuration(f.val, f.def, loc, f.key); err != nil {
			return gc.Retention{}, 0, err
		}
	}
	if every == 0 {
		return gc.Retention{}, 0, retentionError(loc, "every", "off is not a time between sweeps", "write a duration such as 1h")
	}
	return ret, every, nil
}

// retentionDuration reads one value: "" is the default, off is zero.
func retentionDuration(s string, def time.Duration, loc *policy.Located, key string) (time.Duration, error) {
	switch strings.TrimSpace(s) {
	case "":
		return def, nil
	case "off":
		return 0, nil
	}
	d, err := attractor.ParseDuration(s)
	if err == nil && d > 0 {
		return d, nil
	}
	return 0, retentionError(loc, key, fmt.Sprintf("%q is not a positive duration", s), "write a duration such as 14d or 36h, or off")
}

func retentionError(loc *policy.Located, key, msg, hint string) error {
	if loc == nil {
		return fmt.Errorf("retention.%s: %s (%s)", key, msg, hint)
	}
	return loc.Errorf([]string{"retention", key}, "%s (%s)", msg, hint)
}

// retentionLoop is serve's background sweep of the data dir by the
// policy's retention, at start and every retention.every; remote run
// branches are deleted through the installation that reaches their
// repository.
func retentionLoop(cfg serveConfig, srv *appserver.Server, app *ghapp.App) (func(context.Context), error) {
	ret, every, err := cfg.Policy.retention()
	if err != nil {
		return nil, err
	}
	o := appserver.RetentionOptions{Retention: ret, Every: every}
	if ret.RemoteBranches > 0 {
		o.InstallationOf = func(ctx context.Context, repo string) (int64, error) {
			owner, name, _ := strings.Cut(repo, "/")
			return app.RepoInstallation(ctx, ghapp.Repo{Owner: owner, Name: name})
		}
	}
	return func(ctx context.Context) { srv.RunRetention(ctx, o) }, nil
}

// retention is the policy's retention with the cap of one cache
// (sandbox.caches.max_bytes), which the same sweep enforces.
func (p serverPolicy) retention() (gc.Retention, time.Duration, error) {
	ret, every, err := p.Retention.options(nil)
	if err != nil {
		return ret, every, err
	}
	ret.CacheBytes, err = p.Sandbox.Caches.maxBytes()
	return ret, every, err
}
