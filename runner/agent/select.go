package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// selection is the backend, model and effort one node runs with.
type selection struct {
	name   string
	b      Backend
	model  string // may be empty for a CLI: the CLI's default
	effort string // "", minimal, low, medium, high or xhigh
}

// providerAliases lets llm_provider use the product names too.
var providerAliases = map[string]string{
	"claude": ProviderAnthropic,
	"codex":  ProviderOpenAI,
	"gemini": ProviderGoogle,
}

var efforts = []string{"minimal", "low", "medium", "high", "xhigh"}

// selectBackend resolves the node's llm_provider, llm_model and
// reasoning_effort (after the stylesheet) against the configuration.
func (a *Agent) selectBackend(n *attractor.Node) (selection, *attractor.Outcome) {
	name, fail := a.backendFor(n)
	if fail != nil {
		return selection{}, fail
	}
	b := a.cfg.Backends[name]
	sel := selection{name: name, b: b, model: or(strings.TrimSpace(n.LLMModel), b.Model)}
	if sel.model != "" && !b.allowsModel(sel.model) {
		return selection{}, structural(fmt.Sprintf("node %s asks for model %q, which agent backend %s does not allow; allowed: %s",
			n.ID, sel.model, name, strings.Join(b.Models, ", ")))
	}
	if sel.model == "" && b.Kind == KindAPI {
		return selection{}, structural(fmt.Sprintf("node %s runs on API backend %s, which needs a model: set llm_model on the node "+
			"(or in model_stylesheet) or agents.backends.%s.model", n.ID, name, name))
	}
	sel.effort = strings.ToLower(strings.TrimSpace(n.ReasoningEffort))
	if sel.effort != "" && !slices.Contains(efforts, sel.effort) {
		return selection{}, structural(fmt.Sprintf("node %s has reasoning_effort=%q; use one of %s",
			n.ID, n.ReasoningEffort, strings.Join(efforts, ", ")))
	}
	return sel, nil
}

// backendFor picks the backend name: the one llm_provider names, else the
// backends whose provider it names (the default first, then by name), else
// the default backend when llm_provider is empty.
func (a *Agent) backendFor(n *attractor.Node) (string, *attractor.Outcome) {
	want := strings.ToLower(strings.TrimSpace(n.LLMProvider))
	if want == "" {
		return a.defaultBackend(n)
	}
	if _, ok := a.cfg.Backends[want]; ok {
		return want, nil
	}
	provider := want
	if p, ok := providerAliases[want]; ok {
		provider = p
	}
	var match []string
	for _, name := range slices.Sorted(maps.Keys(a.cfg.Backends)) {
		if a.cfg.Backends[name].Provider == provider {
			match = append(match, name)
		}
	}
	switch {
	case slices.Contains(match, a.cfg.Default):
		return a.cfg.Default, nil
	case len(match) > 0:
		return match[0], nil
	}
	return "", structural(fmt.Sprintf("node %s asks for llm_provider=%s, which no configured agent backend provides; allowed: %s",
		n.ID, n.LLMProvider, a.allowed()))
}

func (a *Agent) defaultBackend(n *attractor.Node) (string, *attractor.Outcome) {
	if a.cfg.Default != "" {
		return a.cfg.Default, nil
	}
	switch len(a.cfg.Backends) {
	case 0:
		return "", structural(fmt.Sprintf("node %s needs a coding agent and no agent backend is configured: add one under agents.backends%s", n.ID, a.where()))
	case 1:
		for name := range a.cfg.Backends {
			return name, nil
		}
	}
	return "", structural(fmt.Sprintf("node %s sets no llm_provider and agents.default is empty: set one of them; allowed: %s",
		n.ID, a.allowed()))
}

// where is " (in WHERE)" naming the host's agents configuration, or "".
func (a *Agent) where() string {
	if a.deps.Where == "" {
		return ""
	}
	return " (in " + a.deps.Where + ")"
}

// allowed lists the configured backends for a failure reason.
func (a *Agent) allowed() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(a.cfg.Backends)) {
		parts = append(parts, a.cfg.Backends[name].describe(name))
	}
	if len(parts) == 0 {
		return "none (agents.backends is empty)"
	}
	return strings.Join(parts, "; ")
}
