package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/image"
)

// serverImages is the policy's `images:` (docs/serve.md, Images):
//
//	images:
//	  default: host                      # or an image every repository without image: runs in
//	  allow: ["docker.io/library/golang:*", "ghcr.io/acme/**"]   # what a repository may name
//	  registries:
//	    auth_file: /etc/kilroy/registries.json   # docker config.json; never visible to nodes
//	    insecure: ["registry.internal:5000"]     # plain HTTP
//	  max_bytes: 8GiB                    # an image's uncompressed size
type serverImages struct {
	Default    string           `yaml:"default"`
	Allow      []string         `yaml:"allow"`
	Registries serverRegistries `yaml:"registries"`
	MaxBytes   string           `yaml:"max_bytes"`
}

type serverRegistries struct {
	AuthFile string   `yaml:"auth_file"`
	Insecure []string `yaml:"insecure"`
}

// check validates the section; loc places a problem in the policy file.
func (p serverImages) check(loc *policy.Located) error {
	if p.Default != "" && p.Default != policy.ImageHost {
		if _, err := image.Normalize(p.Default); err != nil || image.Local(p.Default) {
			return loc.Errorf([]string{"images", "default"}, "%q is not an image reference; write one like "+
				"docker.io/library/golang:1.23, or host", p.Default)
		}
	}
	for i, a := range p.Allow {
		if a == policy.ImageHost {
			continue
		}
		if err := image.CheckPattern(a); err != nil {
			return loc.Errorf([]string{"images", "allow"}, "item %d: %v", i+1, err)
		}
	}
	if p.Registries.AuthFile != "" && !filepath.IsAbs(p.Registries.AuthFile) {
		return loc.Errorf([]string{"images", "registries", "auth_file"}, "%q is not an absolute path; write the absolute path of a docker config.json the bot can read", p.Registries.AuthFile)
	}
	if _, err := parseSize("images.max_bytes", p.MaxBytes); err != nil {
		return loc.Errorf([]string{"images", "max_bytes"}, "%v", err)
	}
	return nil
}

// options opens the image store under dataDir and says how runs choose
// their image.
func (p serverImages) options(dataDir string) (runner.ImageOptions, *image.Store, error) {
	max, err := parseSize("images.max_bytes", p.MaxBytes)
	if err != nil {
		return runner.ImageOptions{}, nil, err
	}
	store, err := image.Open(filepath.Join(dataDir, "images"), image.Options{
		AuthFile: p.Registries.AuthFile, Insecure: p.Registries.Insecure, MaxBytes: max,
	})
	if err != nil {
		return runner.ImageOptions{}, nil, err
	}
	return runner.ImageOptions{Store: store, Default: p.Default, Restrict: true, Allow: p.Allow}, store, nil
}

// defaultImageRetention keeps an image no run uses for a week.
const defaultImageRetention = 7 * 24 * time.Hour

// imageSweep removes the images no run has used for retention.images,
// every retention.every; nil when images are kept forever.
func imageSweep(cfg serveConfig, store *image.Store, log *slog.Logger) (func(context.Context), error) {
	keep, err := retentionDuration(cfg.Policy.Retention.Images, defaultImageRetention, nil, "images")
	if err != nil || keep == 0 {
		return nil, err
	}
	_, every, err := cfg.Policy.Retention.options(nil)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			removed, err := store.Sweep(ctx, keep)
			if err != nil {
				log.Warn("retention: images", "err", err)
			} else if len(removed) > 0 {
				log.Info("retention: images removed", "count", len(removed))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}, nil
}
