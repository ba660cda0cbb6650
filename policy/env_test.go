package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func resolveEnvFor(t *testing.T, profiles []string, env EnvPolicy, host map[string]string) *Resolved {
	t.Helper()
	p := ArtifactPolicy{Profiles: ProfilesPolicy{Mode: ModeExplicit, Explicit: profiles}, Env: env}
	r, err := Resolve(ResolveInput{Policy: p, RunDir: "/runs/r1", HostEnv: host})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return r
}

func TestEnvPrecedence(t *testing.T) {
	home := map[string]string{"HOME": "/home/u"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"HOME": "/home/u"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	overrides := map[string]map[string]string{"rust": {"CARGO_HOME": "ovr/cargo"}}
	roots := map[string]string{"rust": "cache/rust"}
	tests := []struct {
		name string
		env  EnvPolicy
		host map[string]string
		want string
	}{
		{"built-in default", EnvPolicy{}, home, "/home/u/.cargo"},
		{"managed root beats built-in", EnvPolicy{ManagedRoots: roots}, home, "/runs/r1/policy-managed-roots/cache/rust/cargo-home"},
		{"override beats managed root", EnvPolicy{ManagedRoots: roots, Overrides: overrides}, home, "ovr/cargo"},
		{"host beats override", EnvPolicy{ManagedRoots: roots, Overrides: overrides}, with("CARGO_HOME", "/host/cargo"), "/host/cargo"},
		{"empty host value counts as unset", EnvPolicy{Overrides: overrides}, with("CARGO_HOME", ""), "ovr/cargo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resolveEnvFor(t, []string{"rust"}, tt.env, tt.host)
			if got := r.Env["CARGO_HOME"]; got != tt.want {
				t.Errorf("CARGO_HOME = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEnvProfiles(t *testing.T) {
	home := map[string]string{"HOME": "/home/u"}
	tests := []struct {
		name      string
		profiles  []string
		env       EnvPolicy
		host      map[string]string
		wantEnv   map[string]string
		wantRoots map[string]string
	}{
		{
			name:     "built-in defaults of every profile",
			profiles: []string{"rust", "go", "node", "python", "java"},
			host:     home,
			wantEnv: map[string]string{
				"CARGO_HOME":       "/home/u/.cargo",
				"RUSTUP_HOME":      "/home/u/.rustup",
				"CARGO_TARGET_DIR": "/runs/r1/policy-managed-roots/cargo-target",
				"GOPATH":           "/home/u/go",
				"GOMODCACHE":       "/home/u/go/pkg/mod",
				"npm_config_cache": "/home/u/.npm",
				"PNPM_HOME":        "/home/u/.local/share/pnpm",
				"PIP_CACHE_DIR":    "/home/u/.cache/pip",
				"GRADLE_USER_HOME": "/home/u/.gradle",
				"MAVEN_OPTS":       "-Dmaven.repo.local=/home/u/.m2/repository",
			},
		},
		{
			name:     "relative managed roots live under the run directory",
			profiles: []string{"rust", "go", "node", "python", "java"},
			env: EnvPolicy{ManagedRoots: map[string]string{
				"rust": "rust", "go": "go", "node": "js/node", "python": "py", "java": "jvm",
			}},
			host: home,
			wantEnv: map[string]string{
				"CARGO_HOME":       "/runs/r1/policy-managed-roots/rust/cargo-home",
				"RUSTUP_HOME":      "/home/u/.rustup", // toolchains stay where they are installed
				"CARGO_TARGET_DIR": "/runs/r1/policy-managed-roots/rust/cargo-target",
				"GOPATH":           "/runs/r1/policy-managed-roots/go/gopath",
				"GOMODCACHE":       "/runs/r1/policy-managed-roots/go/gopath/pkg/mod",
				"npm_config_cache": "/runs/r1/policy-managed-roots/js/node/npm-cache",
				"PNPM_HOME":        "/runs/r1/policy-managed-roots/js/node/pnpm-home",
				"PIP_CACHE_DIR":    "/runs/r1/policy-managed-roots/py/pip-cache",
				"GRADLE_USER_HOME": "/runs/r1/policy-managed-roots/jvm/gradle-home",
				"MAVEN_OPTS":       "-Dmaven.repo.local=/runs/r1/policy-managed-roots/jvm/m2",
			},
			wantRoots: map[string]string{
				"rust": "/runs/r1/policy-managed-roots/rust", "go": "/runs/r1/policy-managed-roots/go",
				"node": "/runs/r1/policy-managed-roots/js/node", "python": "/runs/r1/policy-managed-roots/py",
				"java": "/runs/r1/policy-managed-roots/jvm",
			},
		},
		{
			name:     "a managed root is cleaned; roots of inactive profiles are dropped",
			profiles: []string{"python"},
			env:      EnvPolicy{ManagedRoots: map[string]string{"python": "py//pip/", "go": "go"}},
			wantEnv:  map[string]string{"PIP_CACHE_DIR": "/runs/r1/policy-managed-roots/py/pip/pip-cache"},
			wantRoots: map[string]string{
				"python": "/runs/r1/policy-managed-roots/py/pip",
			},
		},
		{
			name:     "GOMODCACHE follows the first GOPATH entry",
			profiles: []string{"go"},
			host:     map[string]string{"HOME": "/home/u", "GOPATH": "/a:/b"},
			wantEnv:  map[string]string{"GOPATH": "/a:/b", "GOMODCACHE": "/a/pkg/mod"},
		},
		{
			name:     "GOMODCACHE follows an overridden GOPATH unless set itself",
			profiles: []string{"go"},
			env:      EnvPolicy{Overrides: map[string]map[string]string{"go": {"GOPATH": "o"}}},
			host:     map[string]string{"GOMODCACHE": "/mc"},
			wantEnv:  map[string]string{"GOPATH": "o", "GOMODCACHE": "/mc"},
		},
		{
			name:     "without HOME only run-directory defaults are set",
			profiles: []string{"rust", "go", "java"},
			wantEnv:  map[string]string{"CARGO_TARGET_DIR": "/runs/r1/policy-managed-roots/cargo-target"},
		},
		{
			name:     "overrides may add variables no profile owns; the host still wins",
			profiles: []string{"node", "generic"},
			env: EnvPolicy{Overrides: map[string]map[string]string{
				"node":    {"NODE_OPTIONS": "--max-old-space-size=4096", "CI": "1"},
				"generic": {"TZ": "UTC"},
				"rust":    {"RUSTFLAGS": "-D warnings"},
			}},
			host: map[string]string{"HOME": "/h", "CI": "true"},
			wantEnv: map[string]string{
				"npm_config_cache": "/h/.npm", "PNPM_HOME": "/h/.local/share/pnpm",
				"NODE_OPTIONS": "--max-old-space-size=4096", "CI": "true", "TZ": "UTC",
			},
		},
		{
			name:     "generic alone sets nothing",
			profiles: []string{"generic"},
			host:     home,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resolveEnvFor(t, tt.profiles, tt.env, tt.host)
			if diff := cmp.Diff(r.Env, tt.wantEnv); diff != "" {
				t.Errorf("env (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(r.ManagedRoots, tt.wantRoots); diff != "" {
				t.Errorf("managed roots (-got +want):\n%s", diff)
			}
		})
	}
}

func TestMavenOpts(t *testing.T) {
	tests := []struct {
		name string
		env  EnvPolicy
		host map[string]string
		want string // "" means MAVEN_OPTS is not set
	}{
		{"absent: the flag alone", EnvPolicy{}, map[string]string{"HOME": "/h"}, "-Dmaven.repo.local=/h/.m2/repository"},
		{"host options kept, flag appended", EnvPolicy{}, map[string]string{"HOME": "/h", "MAVEN_OPTS": "-Xmx1g"}, "-Xmx1g -Dmaven.repo.local=/h/.m2/repository"},
		{"host flag present: unchanged", EnvPolicy{ManagedRoots: map[string]string{"java": "c"}},
			map[string]string{"HOME": "/h", "MAVEN_OPTS": "-Dmaven.repo.local=/mine -Xmx1g"}, "-Dmaven.repo.local=/mine -Xmx1g"},
		{"override options with a managed root", EnvPolicy{
			Overrides:    map[string]map[string]string{"java": {"MAVEN_OPTS": "-Xms1g"}},
			ManagedRoots: map[string]string{"java": "c/java"},
		}, nil, "-Xms1g -Dmaven.repo.local=/runs/r1/policy-managed-roots/c/java/m2"},
		{"override with the flag: unchanged", EnvPolicy{
			Overrides: map[string]map[string]string{"java": {"MAVEN_OPTS": "-Dmaven.repo.local=/o"}},
		}, map[string]string{"HOME": "/h"}, "-Dmaven.repo.local=/o"},
		{"host beats override", EnvPolicy{
			Overrides: map[string]map[string]string{"java": {"MAVEN_OPTS": "-Xms1g"}},
		}, map[string]string{"HOME": "/h", "MAVEN_OPTS": "-Xmx2g"}, "-Xmx2g -Dmaven.repo.local=/h/.m2/repository"},
		{"no HOME, no root: nothing to append", EnvPolicy{}, nil, ""},
		{"no HOME, host options: kept", EnvPolicy{}, map[string]string{"MAVEN_OPTS": "-Xmx1g"}, "-Xmx1g"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resolveEnvFor(t, []string{"java"}, tt.env, tt.host)
			got, ok := r.Env["MAVEN_OPTS"]
			if tt.want == "" && ok {
				t.Fatalf("MAVEN_OPTS = %q, want it unset", got)
			}
			if got != tt.want {
				t.Errorf("MAVEN_OPTS = %q, want %q", got, tt.want)
			}
		})
	}
}

// With the repository's caches, a cache variable never takes the host's
// value or a default under HOME: it points at the repository's cache,
// unless the repository chose a directory of its run (an override, a
// managed root); variables that are not caches keep their precedence.
func TestEnvCaches(t *testing.T) {
	c := "/data/caches/1/octo/widgets/cache/"
	caches := map[string]string{"GOPATH": c + "gopath", "GOMODCACHE": c + "gomodcache", "GOCACHE": c + "gocache",
		"CARGO_HOME": c + "cargo-home", "npm_config_cache": c + "npm", "PNPM_HOME": c + "pnpm-home",
		"PIP_CACHE_DIR": c + "pip", "GRADLE_USER_HOME": c + "gradle-home"}
	host := map[string]string{"HOME": "/home/u", "GOMODCACHE": "/home/u/mod", "CARGO_HOME": "/home/u/cargo",
		"GOCACHE": "/home/u/gobuild", "RUSTUP_HOME": "/home/u/rustup"}
	tests := []struct {
		name    string
		env     EnvPolicy
		wantEnv map[string]string
	}{
		{"the repository's caches", EnvPolicy{}, map[string]string{
			"CARGO_HOME": c + "cargo-home", "RUSTUP_HOME": "/home/u/rustup", "CARGO_TARGET_DIR": "/runs/r1/policy-managed-roots/cargo-target",
			"GOPATH": c + "gopath", "GOMODCACHE": c + "gomodcache",
			"npm_config_cache": c + "npm", "PNPM_HOME": c + "pnpm-home", "PIP_CACHE_DIR": c + "pip",
			"GRADLE_USER_HOME": c + "gradle-home", "MAVEN_OPTS": "-Dmaven.repo.local=" + c + "m2",
		}},
		{"a managed root, and GOMODCACHE following its GOPATH", EnvPolicy{ManagedRoots: map[string]string{"go": "go", "rust": "rust"}},
			map[string]string{
				"CARGO_HOME": "/runs/r1/policy-managed-roots/rust/cargo-home", "RUSTUP_HOME": "/home/u/rustup",
				"CARGO_TARGET_DIR": "/runs/r1/policy-managed-roots/rust/cargo-target",
				"GOPATH":           "/runs/r1/policy-managed-roots/go/gopath", "GOMODCACHE": "/runs/r1/policy-managed-roots/go/gopath/pkg/mod",
				"npm_config_cache": c + "npm", "PNPM_HOME": c + "pnpm-home", "PIP_CACHE_DIR": c + "pip",
				"GRADLE_USER_HOME": c + "gradle-home", "MAVEN_OPTS": "-Dmaven.repo.local=" + c + "m2",
			}},
		{"overrides of cache variables a profile owns and one it does not", EnvPolicy{Overrides: map[string]map[string]string{
			"go": {"GOMODCACHE": ".mod", "GOCACHE": ".gocache"}}},
			map[string]string{
				"CARGO_HOME": c + "cargo-home", "RUSTUP_HOME": "/home/u/rustup", "CARGO_TARGET_DIR": "/runs/r1/policy-managed-roots/cargo-target",
				"GOPATH": c + "gopath", "GOMODCACHE": ".mod", "GOCACHE": ".gocache",
				"npm_config_cache": c + "npm", "PNPM_HOME": c + "pnpm-home", "PIP_CACHE_DIR": c + "pip",
				"GRADLE_USER_HOME": c + "gradle-home", "MAVEN_OPTS": "-Dmaven.repo.local=" + c + "m2",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ArtifactPolicy{Profiles: ProfilesPolicy{Mode: ModeExplicit, Explicit: []string{"go", "java", "node", "python", "rust"}}, Env: tt.env}
			r, err := Resolve(ResolveInput{Policy: p, RunDir: "/runs/r1", HostEnv: host, Caches: caches, MavenRepo: c + "m2"})
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff(r.Env, tt.wantEnv); diff != "" {
				t.Errorf("env (-got +want):\n%s", diff)
			}
		})
	}
}
