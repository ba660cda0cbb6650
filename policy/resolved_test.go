package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustResolve(t *testing.T, p ArtifactPolicy) *Resolved {
	t.Helper()
	r, err := Resolve(ResolveInput{Policy: p, Repo: repo("go.mod", "web/package.json"), RunDir: "/runs/r1",
		HostEnv: map[string]string{"HOME": "/home/u"}})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return r
}

func TestExcludedDefaults(t *testing.T) {
	r := mustResolve(t, ArtifactPolicy{})
	if diff := cmp.Diff(r.Checkpoint.ExcludeGlobs, []string{
		"**/.cargo-target*/**", "**/.cargo_target*/**", "**/.wasm-pack/**", "**/.tmpbuild/**",
		"**/node_modules/**", "**/__pycache__/**", "**/.venv/**",
	}); diff != "" {
		t.Errorf("default excludes (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(r.Verify.DenyGlobs, r.Checkpoint.ExcludeGlobs); diff != "" {
		t.Errorf("default deny globs differ from the excludes (-got +want):\n%s", diff)
	}
	tests := []struct {
		path string
		want bool
	}{
		{".cargo-target/debug/app", true},
		{"crates/a/.cargo-target-local/x.rlib", true},
		{".cargo_target_local/debug/x", true},
		{"pkg/.wasm-pack/out.wasm", true},
		{".tmpbuild/o.o", true},
		{"node_modules/left-pad/index.js", true},
		{"web/node_modules/react/index.js", true},
		{"src/__pycache__/m.cpython-312.pyc", true},
		{".venv/bin/python", true},
		{"svc/.venv/lib/python3.12/site-packages/x.py", true},
		{"target/debug/app", false}, // broad names are not excluded by default
		{"dist/app.js", false},
		{"build/out.o", false},
		{"src/main.go", false},
		{"docs/node_modules.md", false},
	}
	for _, tt := range tests {
		if got := r.Excluded(tt.path); got != tt.want {
			t.Errorf("Excluded(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestExcludedCustom(t *testing.T) {
	r := mustResolve(t, ArtifactPolicy{Checkpoint: CheckpointPolicy{ExcludeGlobs: []string{"**/target/**"}}})
	for path, want := range map[string]bool{"target/x": true, "node_modules/x": false} {
		if got := r.Excluded(path); got != want {
			t.Errorf("Excluded(%q) = %v, want %v (custom excludes replace the defaults)", path, got, want)
		}
	}
}

func TestVerifyDenyThenAllow(t *testing.T) {
	r := mustResolve(t, ArtifactPolicy{Verify: VerifyPolicy{
		DenyGlobs:  []string{"**/dist/**", "**/*.log"},
		AllowGlobs: []string{"keep/dist/ok.txt", "keep/**"},
	}})
	type decision struct {
		Denied          bool
		Deny, AllowRule string
	}
	tests := []struct {
		path string
		want decision
	}{
		{"web/dist/app.js", decision{true, "**/dist/**", ""}},
		{"keep/dist/ok.txt", decision{false, "**/dist/**", "keep/dist/ok.txt"}},
		{"src/ok.go", decision{}},
		{"keep/run.log", decision{false, "**/*.log", "keep/**"}},
		{"run.log", decision{true, "**/*.log", ""}},
	}
	for _, tt := range tests {
		denied, deny, allow := r.VerifyDecision(tt.path)
		if diff := cmp.Diff(decision{denied, deny, allow}, tt.want); diff != "" {
			t.Errorf("VerifyDecision(%q) (-got +want):\n%s", tt.path, diff)
		}
	}
}

func TestVerifyPaths(t *testing.T) {
	r := mustResolve(t, ArtifactPolicy{Verify: VerifyPolicy{
		DenyGlobs:  []string{"**/dist/**"},
		AllowGlobs: []string{"keep/dist/ok.txt"},
	}})
	got := r.VerifyPaths([]string{"web/dist/app.js", "keep/dist/ok.txt", "src/ok.go", "web/dist/app.js"})
	want := VerifyReport{
		Offending:        []string{"web/dist/app.js"},
		MatchedDenyRules: []string{"**/dist/**"},
		Allowed:          []string{"keep/dist/ok.txt"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("VerifyPaths (-got +want):\n%s", diff)
	}
}

func TestResolveRejectsBadPolicy(t *testing.T) {
	tests := []struct {
		name    string
		policy  ArtifactPolicy
		wantKey string
		wantMsg string
	}{
		{"bad deny glob", ArtifactPolicy{Verify: VerifyPolicy{DenyGlobs: []string{"ok/**", "web/[dist/**"}}},
			"artifact_policy.verify.deny_globs[1]", `invalid glob "web/[dist/**"`},
		{"bad exclude glob", ArtifactPolicy{Checkpoint: CheckpointPolicy{ExcludeGlobs: []string{"{a,b"}}},
			"artifact_policy.checkpoint.exclude_globs[0]", `invalid glob "{a,b"`},
		{"bad allow glob", ArtifactPolicy{Verify: VerifyPolicy{AllowGlobs: []string{"a\\"}}},
			"artifact_policy.verify.allow_globs[0]", `invalid glob "a\\"`},
		{"absolute glob", ArtifactPolicy{Verify: VerifyPolicy{AllowGlobs: []string{"/dist/**"}}},
			"artifact_policy.verify.allow_globs[0]", `write "dist/**"`},
		{"empty glob", ArtifactPolicy{Verify: VerifyPolicy{AllowGlobs: []string{" "}}},
			"artifact_policy.verify.allow_globs[0]", "empty glob"},
		{"unknown mode", ArtifactPolicy{Profiles: ProfilesPolicy{Mode: "sometimes"}},
			"artifact_policy.profiles.mode", `unknown mode "sometimes"`},
		{"explicit without profiles", ArtifactPolicy{Profiles: ProfilesPolicy{Mode: ModeExplicit}},
			"artifact_policy.profiles.explicit", "needs at least one profile"},
		{"explicit list in auto mode", ArtifactPolicy{Profiles: ProfilesPolicy{Explicit: []string{"go"}}},
			"artifact_policy.profiles.explicit", "only used with mode: explicit"},
		{"unknown explicit profile", ArtifactPolicy{Profiles: ProfilesPolicy{Mode: ModeExplicit, Explicit: []string{"go", "ruby"}}},
			"artifact_policy.profiles.explicit[1]", `unknown profile "ruby"`},
		{"override of another profile's variable", ArtifactPolicy{Env: EnvPolicy{Overrides: map[string]map[string]string{"node": {"GOPATH": "/x"}}}},
			"artifact_policy.env.overrides.node.GOPATH", "set it under env.overrides.go"},
		{"variable overridden twice", ArtifactPolicy{Env: EnvPolicy{Overrides: map[string]map[string]string{"go": {"CI": "1"}, "node": {"CI": "2"}}}},
			"artifact_policy.env.overrides.node.CI", "also set under env.overrides.go"},
		{"bad variable name", ArtifactPolicy{Env: EnvPolicy{Overrides: map[string]map[string]string{"go": {"1X": "1"}}}},
			"artifact_policy.env.overrides.go.1X", "not an environment variable name"},
		{"empty override", ArtifactPolicy{Env: EnvPolicy{Overrides: map[string]map[string]string{"go": {"GOFLAGS": ""}}}},
			"artifact_policy.env.overrides.go.GOFLAGS", "empty value"},
		{"unknown override profile", ArtifactPolicy{Env: EnvPolicy{Overrides: map[string]map[string]string{"ruby": {"X": "1"}}}},
			"artifact_policy.env.overrides.ruby", `unknown profile "ruby"`},
		{"managed root for generic", ArtifactPolicy{Env: EnvPolicy{ManagedRoots: map[string]string{"generic": "x"}}},
			"artifact_policy.env.managed_roots.generic", `unknown profile "generic"`},
		{"managed root escaping", ArtifactPolicy{Env: EnvPolicy{ManagedRoots: map[string]string{"go": "../go"}}},
			"artifact_policy.env.managed_roots.go", "leaves policy-managed-roots/"},
		// Issue 23 item 3: what the sandbox bound from these, each seen
		// to reach the host.
		{"toolchain variable at /proc", overrides("python", "VIRTUAL_ENV", "/proc"),
			"artifact_policy.env.overrides.python.VIRTUAL_ENV", `"/proc" is a host path`},
		{"toolchain variable at /sys", overrides("node", "NVM_DIR", "/sys"),
			"artifact_policy.env.overrides.node.NVM_DIR", `"/sys" is a host path`},
		{"toolchain variable at a socket's directory", overrides("python", "PYENV_ROOT", "/var/run/postgresql"),
			"artifact_policy.env.overrides.python.PYENV_ROOT", "never mounts"},
		{"toolchain variable at /root", overrides("java", "JAVA_HOME", "/root/"),
			"artifact_policy.env.overrides.java.JAVA_HOME", "remove the key"},
		{"cache variable at the host's cache", overrides("go", "GOMODCACHE", "/home/bot/go/pkg/mod"),
			"artifact_policy.env.overrides.go.GOMODCACHE", "is a host path"},
		{"unowned cache variable", overrides("go", "GOCACHE", "/var/cache/go-build"),
			"artifact_policy.env.overrides.go.GOCACHE", "is a host path"},
		{"toolchain variable under /tmp", overrides("go", "GOROOT", "/tmp/go"),
			"artifact_policy.env.overrides.go.GOROOT", "is a host path"},
		{"absolute managed root", ArtifactPolicy{Env: EnvPolicy{ManagedRoots: map[string]string{"go": "/var/cache/kilroy/go"}}},
			"artifact_policy.env.managed_roots.go", "is a host path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resolve(ResolveInput{Policy: tt.policy, Repo: repo(), RunDir: "/runs/r1"})
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Resolve: got %v, want a *ConfigError", err)
			}
			if ce.Key != tt.wantKey || !strings.Contains(ce.Error(), tt.wantMsg) || !strings.HasPrefix(ce.Error(), tt.wantKey+": ") {
				t.Errorf("Resolve error: key %q, %q; want key %q and a message starting with it and containing %q", ce.Key, ce.Error(), tt.wantKey, tt.wantMsg)
			}
		})
	}
}

func TestHashStable(t *testing.T) {
	p := ArtifactPolicy{
		Env:    EnvPolicy{ManagedRoots: map[string]string{"go": "go", "node": "node"}, Overrides: map[string]map[string]string{"node": {"A": "1", "B": "2"}}},
		Verify: VerifyPolicy{AllowGlobs: []string{"keep/**"}},
	}
	a, b := mustResolve(t, p), mustResolve(t, p)
	if a.Hash() != b.Hash() {
		t.Fatalf("same input, different hashes: %s and %s", a.Hash(), b.Hash())
	}
	if len(a.Hash()) != 64 || strings.Trim(a.Hash(), "0123456789abcdef") != "" {
		t.Errorf("Hash() = %q, want 64 lower-case hex digits", a.Hash())
	}
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back Resolved
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Hash() != a.Hash() {
		t.Errorf("hash changed in a JSON round trip: %s, then %s", a.Hash(), back.Hash())
	}
	if diff := cmp.Diff(&back, a); diff != "" {
		t.Errorf("JSON round trip (-got +want):\n%s", diff)
	}
}

func TestHashChanges(t *testing.T) {
	base := mustResolve(t, ArtifactPolicy{})
	changes := map[string]func(r *Resolved){
		"version":        func(r *Resolved) { r.Version++ },
		"mode":           func(r *Resolved) { r.Mode = ModeExplicit },
		"profiles":       func(r *Resolved) { r.Profiles = append(r.Profiles, "rust") },
		"profile order":  func(r *Resolved) { r.Profiles[0], r.Profiles[1] = r.Profiles[1], r.Profiles[0] },
		"markers":        func(r *Resolved) { r.Markers["go"] = "x/go.mod" },
		"env value":      func(r *Resolved) { r.Env["GOPATH"] = "/elsewhere" },
		"env added":      func(r *Resolved) { r.Env["X"] = "" },
		"managed roots":  func(r *Resolved) { r.ManagedRoots = map[string]string{"go": "/r"} },
		"exclude globs":  func(r *Resolved) { r.Checkpoint.ExcludeGlobs = r.Checkpoint.ExcludeGlobs[1:] },
		"deny globs":     func(r *Resolved) { r.Verify.DenyGlobs = append(r.Verify.DenyGlobs, "**/dist/**") },
		"allow globs":    func(r *Resolved) { r.Verify.AllowGlobs = []string{"keep/**"} },
		"glob rewritten": func(r *Resolved) { r.Verify.DenyGlobs[0] = r.Verify.DenyGlobs[0] + "x" },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			r := mustResolve(t, ArtifactPolicy{})
			change(r)
			if r.Hash() == base.Hash() {
				t.Errorf("changing %s kept the hash %s", name, base.Hash())
			}
		})
	}
}

func TestCheckSnapshot(t *testing.T) {
	r := mustResolve(t, ArtifactPolicy{})
	if err := CheckSnapshot(r, r.Hash()); err != nil {
		t.Fatalf("CheckSnapshot with its own hash: %v", err)
	}
	tampered := mustResolve(t, ArtifactPolicy{})
	tampered.Verify.DenyGlobs = nil
	for name, tc := range map[string]struct {
		r    *Resolved
		hash string
	}{
		"edited snapshot": {tampered, r.Hash()},
		"wrong hash":      {r, strings.Repeat("0", 64)},
		"no hash":         {r, ""},
		"no snapshot":     {nil, r.Hash()},
	} {
		err := CheckSnapshot(tc.r, tc.hash)
		if !errors.Is(err, ErrSnapshotMismatch) {
			t.Errorf("%s: CheckSnapshot = %v, want ErrSnapshotMismatch", name, err)
		}
	}
}

func overrides(profile, name, value string) ArtifactPolicy {
	return ArtifactPolicy{Env: EnvPolicy{Overrides: map[string]map[string]string{profile: {name: value}}}}
}
