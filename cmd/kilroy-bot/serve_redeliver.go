package main

import (
	"fmt"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/webhook/redeliver"
)

// serverRedelivery is the policy's `redelivery`: how often serve asks
// GitHub for the deliveries it missed, and how far back it looks.
type serverRedelivery struct {
	Every  string `yaml:"every"`  // a duration, or "off"; default 10m
	Window string `yaml:"window"` // a duration up to 72h; default 72h
}

// options parses the setting; off reports `every: off`. loc places an
// invalid value in the policy file.
func (r serverRedelivery) options(loc *policy.Located) (opts redeliver.Options, off bool, err error) {
	if r.Every == "off" {
		return opts, true, nil
	}
	if opts.Every, err = redeliveryDuration(r.Every, redeliver.DefaultEvery, loc, "every"); err != nil {
		return opts, false, err
	}
	opts.Window, err = redeliveryDuration(r.Window, redeliver.DefaultWindow, loc, "window")
	return opts, false, err
}

func redeliveryDuration(s string, def time.Duration, loc *policy.Located, key string) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := attractor.ParseDuration(s)
	switch {
	case err != nil:
	case d <= 0:
		err = fmt.Errorf("%q is not a positive duration", s)
	case key == "window" && d > redeliver.DefaultWindow:
		err = fmt.Errorf("%q is longer than the 72h GitHub keeps deliveries", s)
	default:
		return d, nil
	}
	hint := "write a duration such as 10m, or off"
	if key == "window" {
		hint = "write a duration such as 24h, at most 72h"
	}
	if loc == nil {
		return 0, fmt.Errorf("redelivery.%s: %w (%s)", key, err, hint)
	}
	return 0, loc.Errorf([]string{"redelivery", key}, "%v (%s)", err, hint)
}
