package runner

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// TestNodeEnvironment checks what a node process sees: the KILROY_* stage
// variables, the artifact policy's variables (GOPATH and GOMODCACHE pinned
// to the go profile's managed root, since the repository has a go.mod),
// the other cache variables in the run's caches,
// the allowlisted host variables, and none of the bot's secrets. A tool
// node and a verify node see the same environment but for their own stage
// variables.
func TestNodeEnvironment(t *testing.T) {
	out := t.TempDir() // outside the worktree, so the dumps are not committed
	dump := func(node string) string {
		return "env > " + filepath.Join(out, node+".env")
	}
	repo := gittest.NewRepo(t, map[string]string{
		"go.mod":             "module example.com/m\n\ngo 1.22\n",
		".kilroy/config.yml": "version: 1\nartifact_policy:\n  env:\n    managed_roots:\n      go: go-root\n",
		".kilroy/ci.dot": pipeline(`
  tool [shape=parallelogram, tool_command=` + quote(dump("tool")) + `]
  verify [shape=octagon, command=` + quote(dump("verify")) + `]
  start -> tool -> verify -> exit`),
	})
	const secretValue = "planted-secret-value-0123456789"
	o := localOptions(t, repo)
	home := o.Env.Host["HOME"]
	o.Env.Host["GITHUB_TOKEN"] = "ghs_plantedinstallationtoken"
	o.Env.Host["KILROY_PRIVATE_KEY_FILE"] = "/keys/app.pem"
	o.Env.Host["CLAUDECODE"] = "1"
	o.Env.Host["BOT_SETTING"] = "named-secret"            // secret by name, passed in SecretNames
	o.Env.Host["LANG"] = "proxy=" + secretValue + "@host" // allowlisted name, secret value inside
	o.Env.Host["UNLISTED_HOST_VAR"] = "x"                 // not on the allowlist
	o.Env.SecretNames = []string{"BOT_SETTING"}
	o.Env.SecretValues = []string{secretValue}

	p, res := runLocal(t, o)
	if res.Status != attractor.StatusSuccess {
		t.Fatalf("run status = %s (%s), want success", res.Status, res.FailureReason)
	}
	gopath := filepath.Join(string(p.Dir), "policy-managed-roots", "go-root", "gopath")
	envs := map[string]map[string]string{}
	for _, node := range []string{"tool", "verify"} {
		env := parseEnv(readFile(t, filepath.Join(out, node+".env")))
		envs[node] = env
		want := map[string]string{
			"PATH":       o.Env.Host["PATH"],
			"HOME":       home,
			"GOPATH":     gopath,
			"GOMODCACHE": filepath.Join(gopath, "pkg", "mod"),
			// The run's own caches (no data dir here), never the host's.
			"CARGO_HOME": filepath.Join(string(p.Dir), CachesDir, "cache", "cargo-home"),
			"GOCACHE":    filepath.Join(string(p.Dir), CachesDir, "cache", "gocache"),

			"KILROY_RUN_ID":                     p.RunID,
			"KILROY_NODE_ID":                    node,
			"KILROY_STAGE_LOGS_DIR":             filepath.Join(p.Dir.Nodes(), node),
			"KILROY_STAGE_STATUS_PATH":          filepath.Join(p.Dir.Nodes(), node, "status.json"),
			"KILROY_STAGE_STATUS_FALLBACK_PATH": filepath.Join(p.Dir.Worktree(), attractor.StatusFallbackName),
			"KILROY_PREDECESSOR_NODE":           map[string]string{"tool": "start", "verify": "tool"}[node],
			"KILROY_PREDECESSOR_OUTCOME":        "success",
		}
		got := map[string]string{}
		for k := range want {
			got[k] = env[k]
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("%s node environment (-got +want):\n%s", node, diff)
		}
		for _, k := range []string{"GITHUB_TOKEN", "KILROY_PRIVATE_KEY_FILE", "CLAUDECODE", "BOT_SETTING", "LANG", "UNLISTED_HOST_VAR"} {
			if v, ok := env[k]; ok {
				t.Errorf("%s node sees %s=%q, want it stripped", node, k, v)
			}
		}
		for k, v := range env {
			if strings.Contains(v, secretValue) || strings.Contains(v, "ghs_planted") {
				t.Errorf("%s node sees a secret in %s", node, k)
			}
		}
	}
	// Same recipe for both kinds: only the per-node stage variables and
	// what bash itself sets differ.
	perNode := map[string]bool{"KILROY_NODE_ID": true, "KILROY_STAGE_LOGS_DIR": true, "KILROY_STAGE_STATUS_PATH": true,
		"KILROY_PREDECESSOR_NODE": true, "_": true, "SHLVL": true, "OLDPWD": true}
	strip := func(env map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range env {
			if !perNode[k] {
				m[k] = v
			}
		}
		return m
	}
	if diff := cmp.Diff(strip(envs["tool"]), strip(envs["verify"])); diff != "" {
		t.Errorf("tool and verify environments differ (-tool +verify):\n%s", diff)
	}
}

func parseEnv(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}
