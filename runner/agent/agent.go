package agent

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/agentrt"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// Deps are what an Agent needs from its host, read once at the edge.
type Deps struct {
	// HostEnv is the bot's own environment (sandbox.HostEnv()); provider
	// keys are looked up in it by the configured names, and it is the base
	// of every node environment. Nil means empty, never the process's own.
	HostEnv map[string]string
	// Policy holds the run's artifact policy variables; build one Agent per
	// run when they differ between runs.
	Policy map[string]string
	// SecretNames and SecretValues are the bot's secrets, stripped from
	// every environment built here (provider keys are added to them).
	SecretNames  []string
	SecretValues []string
	Logger       *slog.Logger
	// HTTP carries the API loop's provider requests; nil uses a plain
	// http.Client.
	HTTP *http.Client
	// Sandbox jails the CLI agents and the API loop's shell tool; nil runs
	// them unjailed. ManagedRoots is the run's policy-managed-roots
	// directory and Caches its cache directory (sandbox.EnvSpec.Caches),
	// both writable inside the jail.
	Sandbox      *sandbox.Sandbox
	ManagedRoots string
	Caches       string
	// RuntimeCache is the bot's directory for the agent runtime's ported
	// programs (agentrt.New). DetectRuntime, without a configured
	// Config.Runtime, takes the runtime a CLI the host has belongs to
	// (agentrt.Detect): a local run's own machine.
	RuntimeCache  string
	DetectRuntime bool
	// Where names the file this host's agents configuration comes from
	// ("the server policy file …", "FILE, the file --agents names"), for a
	// node that finds no backend in it.
	Where string
}

// Agent implements attractor.Agent over the configured backends.
type Agent struct {
	rt *agentrt.Runtime // Config.Runtime; nil: none configured
	// detected are the runtimes found from where a host CLI resolves
	// (Deps.DetectRuntime), by directory: one per directory, so the
	// nodes that start together share one port of its programs.
	detected sync.Map
	cfg      Config
	lim      Limits
	deps     Deps
	log      *slog.Logger
	secret   []string // every secret value, for env stripping and redaction
}

var _ attractor.Agent = (*Agent)(nil)

// New validates cfg, fills its defaults and returns an Agent.
func New(cfg Config, deps Deps) (*Agent, error) {
	backends := make(map[string]Backend, len(cfg.Backends))
	for name, b := range cfg.Backends {
		backends[name] = b.withDefaults()
	}
	cfg.Backends = backends
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.HTTP == nil {
		deps.HTTP = &http.Client{}
	}
	deps.HostEnv = maps.Clone(deps.HostEnv)
	if deps.HostEnv == nil {
		deps.HostEnv = map[string]string{} // never fall back to the process environment
	}
	a := &Agent{cfg: cfg, lim: cfg.Limits.withDefaults(), deps: deps, log: deps.Logger}
	if cfg.Runtime != "" {
		rt, err := agentrt.New(cfg.Runtime, deps.RuntimeCache)
		if err != nil {
			return nil, keyErrorf("runtime", "%v", err)
		}
		a.rt = rt
	}
	a.secret = slices.Clone(deps.SecretValues)
	for _, name := range slices.Sorted(maps.Keys(backends)) {
		if v := deps.HostEnv[backends[name].KeyEnv]; v != "" && !backends[name].NoKey {
			a.secret = append(a.secret, v)
		}
	}
	return a, nil
}

// Run runs one codergen attempt with the backend the node selects. A
// node the configuration does not allow fails structural; an error is
// returned only for a cancelled or timed-out context, which the engine
// reports itself.
func (a *Agent) Run(ctx context.Context, req attractor.AgentRequest) (attractor.Outcome, error) {
	sel, fail := a.selectBackend(req.Node)
	if fail != nil {
		return *fail, nil
	}
	key, fail := a.providerKey(sel)
	if fail != nil {
		return *fail, nil
	}
	if fail := a.budgetGate(req, sel); fail != nil {
		return *fail, nil
	}
	log := a.log.With("run", req.RunID, "node", req.Node.ID, "backend", sel.name, "model", sel.model)
	defer a.scrubStage(ctx, req.StageDir)
	log.InfoContext(ctx, "agent starting", "kind", sel.b.Kind, "attempt", req.Attempt)
	var (
		o   attractor.Outcome
		err error
	)
	switch sel.b.Kind {
	case KindCLI:
		o, err = a.runCLI(ctx, req, sel, key)
	default:
		o, err = a.runAPI(ctx, req, sel, key, log)
	}
	if err != nil {
		return attractor.Outcome{}, err
	}
	o.Meta = withMeta(o.Meta, map[string]any{"agent_backend": sel.name, "agent_model": sel.model})
	// What the agent says ends up on the run page and GitHub; an agent
	// talked into printing its own key must not publish it.
	o.Response = redact(o.Response, a.secret)
	o.FailureReason = redact(o.FailureReason, a.secret)
	log.InfoContext(ctx, "agent finished", "status", o.Status, "failure_class", o.FailureClass)
	return o, nil
}

// providerKey returns the key of the selected backend, or a structural
// failure naming the variable to set.
func (a *Agent) providerKey(sel selection) (string, *attractor.Outcome) {
	if sel.b.NoKey {
		return "", nil
	}
	if v := a.deps.HostEnv[sel.b.KeyEnv]; v != "" {
		return v, nil
	}
	return "", structural(fmt.Sprintf(
		"agent backend %s needs a provider key: set the environment variable %s for kilroy-bot "+
			"(agents.backends.%s.key_env names it)", sel.name, sel.b.KeyEnv, sel.name))
}

func structural(reason string) *attractor.Outcome {
	return &attractor.Outcome{Status: attractor.StatusFail, FailureClass: attractor.ClassStructural, FailureReason: reason}
}

func withMeta(m, add map[string]any) map[string]any {
	out := make(map[string]any, len(m)+len(add))
	maps.Copy(out, add)
	maps.Copy(out, m)
	return out
}
