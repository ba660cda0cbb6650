package agent

import (
	"maps"
	"os"
	"slices"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// toolEnv is the environment of the API loop's shell tool: exactly what a
// tool node of the same stage gets, with no provider key.
func (a *Agent) toolEnv(req attractor.AgentRequest) []string {
	return sandbox.NodeEnv(a.envSpec(req))
}

// cliEnv is a CLI agent's environment: a tool node's, plus an isolated HOME
// when home is set, the flavour's own settings (cliFlavourEnv), the
// backend's configured extras and its own provider key under the name the
// CLI reads.
func (a *Agent) cliEnv(req attractor.AgentRequest, sel selection, key, home string, jail *sandbox.Jail) []string {
	spec := a.envSpec(req)
	spec.HomeOverride = home
	spec.Extra = cliFlavourEnv(sel.b, a.lim.ProviderRetries, jail == nil && os.Geteuid() == 0) // the jail runs it as an ordinary user
	maps.Copy(spec.Extra, sel.b.Env)
	if key != "" {
		spec.Extra[sel.b.ChildKeyEnv] = key
	}
	return sandbox.NodeEnv(spec)
}

// jail is the sandbox of an agent process of req's node.
func (a *Agent) jail(req attractor.AgentRequest) *sandbox.Jail {
	return sandbox.NodeJail(a.deps.Sandbox, a.deps.HostEnv, req.Workspace, req.StageDir, a.deps.ManagedRoots, a.deps.Caches)
}

func (a *Agent) envSpec(req attractor.AgentRequest) sandbox.EnvSpec {
	return sandbox.EnvSpec{
		Host:         a.deps.HostEnv,
		Policy:       a.deps.Policy,
		Image:        a.deps.Sandbox.ImageEnv(),
		Stage:        req.StageEnv,
		Caches:       a.deps.Caches,
		SecretNames:  a.secretNames(),
		SecretValues: a.secret,
	}
}

// secretNames adds every configured key variable to the caller's names, so
// a key whose name the sandbox's patterns miss is stripped too.
func (a *Agent) secretNames() []string {
	names := slices.Clone(a.deps.SecretNames)
	for _, name := range slices.Sorted(maps.Keys(a.cfg.Backends)) {
		b := a.cfg.Backends[name]
		for _, k := range []string{b.KeyEnv, b.ChildKeyEnv} {
			if k != "" && !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	return names
}
