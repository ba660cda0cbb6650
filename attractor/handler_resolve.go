package attractor

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// handlerFor resolves n's handler: a registered handler for its explicit
// type, then for its kind, then the engine's own.
func (r *run) handlerFor(n *Node) Handler {
	if h, ok := r.customHandler(n); ok {
		return h
	}
	if n.Kind == KindParallel {
		return HandlerFunc(r.fanOut)
	}
	if n.Kind == KindManagerLoop {
		return HandlerFunc(r.manage)
	}
	if h, ok := builtinHandler(n.Kind); ok {
		return h
	}
	typ := n.Type
	if typ == "" {
		typ = string(n.Kind)
	}
	if typ == "" {
		return HandlerFunc(func(_ context.Context, s *Stage) (Outcome, error) {
			return failOutcome(ClassStructural, fmt.Sprintf("node %s has shape %q, which selects no handler; set a known shape or type=", n.ID, n.Shape)), nil
		})
	}
	return unknownTypeHandler(typ, slices.Sorted(maps.Keys(r.cfg.Handlers)))
}

// customHandler is the handler RunConfig.Handlers registers for n's type,
// else for its kind.
func (r *run) customHandler(n *Node) (Handler, bool) {
	if h, ok := r.cfg.Handlers[n.Type]; ok && n.Type != "" {
		return h, true
	}
	if h, ok := r.cfg.Handlers[string(n.Kind)]; ok && n.Kind != "" {
		return h, true
	}
	return nil, false
}
