package sandbox

import (
	"maps"
	"os"
	"slices"
	"strings"
)

// EnvSpec is what NodeEnv needs to build one node's environment. The
// layers below are applied in field order; later layers win.
type EnvSpec struct {
	// Host is the bot's own environment; nil means HostEnv(). Only
	// allowlisted names pass (see allowedHostVar).
	Host map[string]string
	// Policy holds the artifact policy's variables (CARGO_TARGET_DIR,
	// GOMODCACHE, npm_config_cache, ...). DESIGN §5 puts an explicit host
	// value above them, so they fill names the host leaves empty; a policy
	// value that extends the host's (MAVEN_OPTS with -Dmaven.repo.local
	// appended by the resolver) replaces it.
	Policy map[string]string
	// Caches is the run's cache directory (the repository's caches). When
	// set, every cache variable points into it (CacheEnv) whatever the
	// host sets: a node never gets the host's caches. Only the policy's own
	// value of a cache variable wins over it (the resolver puts the
	// repository's cache there too, unless the repository chose a
	// directory of its run).
	Caches string
	// HomeOverride, when set, is the HOME the node sees (agent CLIs get an
	// isolated one). Toolchain locations are pinned from the real HOME
	// first, so the node still finds cargo, rustup and the Go caches.
	HomeOverride string
	// Stage holds the KILROY_* variables of this attempt
	// (KILROY_STAGE_STATUS_PATH, KILROY_RUN_ID, ...).
	Stage map[string]string
	// Image, when not nil, is the environment of the image the node runs
	// in (Sandbox.ImageEnv): the base instead of the host's variables,
	// with the run's caches (Caches), the policy's variables over it
	// (imageEnv).
	Image []string
	// Extra holds variables a node kind passes on purpose, such as an agent
	// backend's own provider key. They win over every other layer and are
	// never stripped as secrets: naming one here is the decision to pass it.
	Extra map[string]string
	// SecretNames are variables that hold bot secrets under names the
	// patterns of secretName may not catch.
	SecretNames []string
	// SecretValues are the bot's secret values (webhook secret, installation
	// tokens, LLM keys); a variable whose value is, or contains, one of them
	// is stripped whatever its name.
	SecretValues []string
}

// NodeEnv returns the environment of a node of any kind, as "NAME=value"
// entries sorted by name, one per name. It is the only recipe: tool, verify,
// agent CLI, API-agent tools and hooks all call it, so a toolchain a tool
// node finds is one an agent node finds too.
func NodeEnv(spec EnvSpec) []string {
	host := spec.Host
	if host == nil {
		host = HostEnv()
	}
	env := make(map[string]string)
	if spec.Image != nil {
		imageEnv(env, spec)
	} else {
		for k, v := range host {
			if allowedHostVar(k) {
				env[k] = v
			}
		}
		maps.Copy(env, CacheEnv(spec.Caches))
		applyPolicy(env, spec.Policy, spec.Caches != "")
		pinToolchain(env, host)
	}
	if spec.HomeOverride != "" {
		env["HOME"] = spec.HomeOverride
	}
	maps.Copy(env, spec.Stage)
	maps.Copy(env, spec.Extra)
	stripSecrets(env, spec)
	return environ(env)
}

// applyPolicy sets the policy's variables the host leaves empty or that
// extend the host's value; with the run's caches, also its cache
// variables, whose values then never came from the host.
func applyPolicy(env, policy map[string]string, caches bool) {
	for k, v := range policy {
		if cur := env[k]; cur == "" || strings.HasPrefix(v, cur) || (caches && IsCacheVar(k)) {
			env[k] = v
		}
	}
}

// stripSecrets deletes CLAUDECODE (its presence makes Claude Code refuse to
// start, as if nested in another session) and every variable that is, or
// looks like, a bot secret, except those the caller passed in spec.Extra.
func stripSecrets(env map[string]string, spec EnvSpec) {
	delete(env, "CLAUDECODE")
	for k, v := range env {
		if x, ok := spec.Extra[k]; ok && x == v {
			continue
		}
		if secretName(k) || slices.Contains(spec.SecretNames, k) || holdsSecret(v, spec.SecretValues) {
			delete(env, k)
		}
	}
}

// minContainedSecret is the shortest secret that is also looked for inside
// longer values (a token in a URL); shorter ones would match by accident.
const minContainedSecret = 8

func holdsSecret(v string, secrets []string) bool {
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if v == s || (len(s) >= minContainedSecret && strings.Contains(v, s)) {
			return true
		}
	}
	return false
}

func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// HostEnv returns the bot's own environment as a map. It is the one read of
// os.Environ in the product; when a name repeats, the first entry wins, as
// for os.Getenv.
func HostEnv() map[string]string {
	m := make(map[string]string)
	for _, kv := range os.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if _, seen := m[k]; ok && !seen {
			m[k] = v
		}
	}
	return m
}

// Lookup returns the value of key in env ("NAME=value" entries). When a
// name repeats the last entry wins, as it does for exec.Cmd.Env.
func Lookup(env []string, key string) (string, bool) {
	for _, kv := range slices.Backward(env) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// SecretName reports whether a variable's name marks it as a secret
// (tokens, keys, passwords), the rule NodeEnv strips by.
func SecretName(name string) bool { return secretName(name) }

// HostSecrets returns the values of the host variables that look like
// secrets (provider keys, tokens, passwords), for redaction: no node sees
// them, and none may reach GitHub or a log through a node's output either.
func HostSecrets(host map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(host)) {
		if secretName(k) && host[k] != "" {
			out = append(out, host[k])
		}
	}
	return out
}
