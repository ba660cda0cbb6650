package attractor

import (
	"slices"
	"strconv"
	"strings"
)

// graphSettings are the few graph attributes only the engine reads and
// that Pipeline does not type yet. They are read once, here, so no
// handler parses raw attributes.
type graphSettings struct {
	persistKeys []string // loop_restart_persist_keys: context keys a loop restart keeps
	maxRestarts int      // max_restarts: loop restarts allowed per run
}

const defaultMaxRestarts = 50

func settingsOf(p *Pipeline) graphSettings {
	gs := graphSettings{maxRestarts: defaultMaxRestarts}
	if v, ok := p.Attrs.Get("loop_restart_persist_keys"); ok {
		for _, k := range strings.Split(v, ",") {
			if k = strings.TrimSpace(k); k != "" {
				gs.persistKeys = append(gs.persistKeys, strings.TrimPrefix(k, "context."))
			}
		}
	}
	if v, ok := p.Attrs.Get("max_restarts"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			gs.maxRestarts = n
		}
	}
	return gs
}

func (gs graphSettings) persists(key string) bool {
	return slices.Contains(gs.persistKeys, key)
}
