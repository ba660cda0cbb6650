package sandbox

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNodeEnvAllowlist(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("GOCACHE and GOENV defaults below are Linux's")
	}
	host := map[string]string{
		"PATH": "/usr/bin:/bin", "HOME": "/home/u", "USER": "u", "LANG": "C.UTF-8", "LC_ALL": "C",
		"TZ": "UTC", "GOFLAGS": "-mod=mod", "http_proxy": "http://proxy:3128", "XDG_CONFIG_HOME": "/home/u/.cfg",
		// Not allowlisted:
		"FOO": "bar", "SSH_AUTH_SOCK": "/tmp/agent.sock", "LD_PRELOAD": "/evil.so",
		"PIP_INDEX_URL": "https://u:p@index", "KILROY_APP_ID": "42", "CLAUDECODE": "1",
	}
	want := []string{
		"CARGO_HOME=/home/u/.cargo",
		"GOCACHE=/home/u/.cache/go-build",
		"GOENV=/home/u/.cfg/go/env",
		"GOFLAGS=-mod=mod",
		"GOMODCACHE=/home/u/go/pkg/mod",
		"GOPATH=/home/u/go",
		"HOME=/home/u",
		"LANG=C.UTF-8",
		"LC_ALL=C",
		"PATH=/usr/bin:/bin",
		"RUSTUP_HOME=/home/u/.rustup",
		"TZ=UTC",
		"USER=u",
		"http_proxy=http://proxy:3128",
	}
	if diff := cmp.Diff(NodeEnv(EnvSpec{Host: host}), want); diff != "" {
		t.Errorf("NodeEnv (-got +want):\n%s", diff)
	}
}

// A version manager's shim on PATH (pyenv, nodenv, rbenv) picks the
// toolchain it runs from its *_VERSION variable: without it a node would
// run another version than the bot's shell does (one without pytest, say).
func TestNodeEnvKeepsVersionSelectors(t *testing.T) {
	host := map[string]string{"PYENV_VERSION": "system", "NODENV_VERSION": "20.1.0", "RBENV_VERSION": "3.3.0"}
	keys := []string{"PYENV_VERSION", "NODENV_VERSION", "RBENV_VERSION"}
	got := lookups(NodeEnv(EnvSpec{Host: host}), keys...)
	if diff := cmp.Diff(got, host); diff != "" {
		t.Errorf("version selectors in NodeEnv (-got +want):\n%s", diff)
	}
}

// lookups returns the values of keys in env; a missing key maps to "<unset>".
func lookups(env []string, keys ...string) map[string]string {
	m := make(map[string]string)
	for _, k := range keys {
		v, ok := Lookup(env, k)
		if !ok {
			v = "<unset>"
		}
		m[k] = v
	}
	return m
}

func TestNodeEnvPins(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("GOCACHE defaults below are Linux's")
	}
	keys := []string{"CARGO_HOME", "RUSTUP_HOME", "GOPATH", "GOMODCACHE", "GOCACHE"}
	tests := []struct {
		name string
		host map[string]string
		want map[string]string
	}{
		{"explicit values kept", map[string]string{
			"HOME": "/h", "CARGO_HOME": "/opt/cargo", "RUSTUP_HOME": "/opt/rustup", "GOPATH": "/opt/gp",
			"GOMODCACHE": "/opt/mod", "GOCACHE": "/opt/cache",
		}, map[string]string{
			"CARGO_HOME": "/opt/cargo", "RUSTUP_HOME": "/opt/rustup", "GOPATH": "/opt/gp",
			"GOMODCACHE": "/opt/mod", "GOCACHE": "/opt/cache",
		}},
		{"GOMODCACHE follows the first GOPATH entry", map[string]string{
			"HOME": "/h", "GOPATH": "/opt/gp:/other", "XDG_CACHE_HOME": "/xdg",
		}, map[string]string{
			"CARGO_HOME": "/h/.cargo", "RUSTUP_HOME": "/h/.rustup", "GOPATH": "/opt/gp:/other",
			"GOMODCACHE": "/opt/gp/pkg/mod", "GOCACHE": "/xdg/go-build",
		}},
		{"empty counts as unset", map[string]string{
			"HOME": "/h", "GOPATH": "", "CARGO_HOME": "", "XDG_CACHE_HOME": "relative",
		}, map[string]string{
			"CARGO_HOME": "/h/.cargo", "RUSTUP_HOME": "/h/.rustup", "GOPATH": "/h/go",
			"GOMODCACHE": "/h/go/pkg/mod", "GOCACHE": "/h/.cache/go-build",
		}},
		{"no HOME, nothing to derive", map[string]string{"PATH": "/bin"}, map[string]string{
			"CARGO_HOME": "<unset>", "RUSTUP_HOME": "<unset>", "GOPATH": "<unset>",
			"GOMODCACHE": "<unset>", "GOCACHE": "<unset>",
		}},
		{"relative HOME is not pinned", map[string]string{"HOME": "h"}, map[string]string{
			"CARGO_HOME": "<unset>", "RUSTUP_HOME": "<unset>", "GOPATH": "<unset>",
			"GOMODCACHE": "<unset>", "GOCACHE": "<unset>",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lookups(NodeEnv(EnvSpec{Host: tt.host}), keys...)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("NodeEnv (-got +want):\n%s", diff)
			}
		})
	}
}

func TestNodeEnvPrecedence(t *testing.T) {
	host := map[string]string{
		"HOME": "/home/real", "LANG": "C", "CARGO_TARGET_DIR": "/host/target", "MAVEN_OPTS": "-Xmx1g",
	}
	spec := EnvSpec{
		Host: host,
		Policy: map[string]string{
			"CARGO_TARGET_DIR": "/run/target",                       // host's explicit value wins
			"MAVEN_OPTS":       "-Xmx1g -Dmaven.repo.local=/run/m2", // extends the host's: wins
			"GOPATH":           "/run/gopath",                       // beats the pin
			"PIP_CACHE_DIR":    "/run/pip",                          // fills an unset name
			"KILROY_NODE_ID":   "from-policy",                       // loses to Stage
			"LANG":             "from-policy",                       // host wins
		},
		HomeOverride: "/isolated",
		Stage:        map[string]string{"KILROY_NODE_ID": "build", "KILROY_RUN_ID": "r1"},
		Extra:        map[string]string{"KILROY_RUN_ID": "from-extra", "LANG": "from-extra", "HOME": "/agent-home"},
	}
	got := lookups(NodeEnv(spec), "CARGO_TARGET_DIR", "MAVEN_OPTS", "GOPATH", "GOMODCACHE",
		"PIP_CACHE_DIR", "KILROY_NODE_ID", "KILROY_RUN_ID", "LANG", "HOME", "CARGO_HOME")
	want := map[string]string{
		"CARGO_TARGET_DIR": "/host/target",
		"MAVEN_OPTS":       "-Xmx1g -Dmaven.repo.local=/run/m2",
		"GOPATH":           "/run/gopath",
		"GOMODCACHE":       "/run/gopath/pkg/mod",
		"PIP_CACHE_DIR":    "/run/pip",
		"KILROY_NODE_ID":   "build",
		"KILROY_RUN_ID":    "from-extra",
		"LANG":             "from-extra",
		"HOME":             "/agent-home",
		"CARGO_HOME":       "/home/real/.cargo",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("NodeEnv (-got +want):\n%s", diff)
	}
}

func TestNodeEnvStripsSecrets(t *testing.T) {
	const token = "ghs_0123456789abcdef"
	spec := EnvSpec{
		Host: map[string]string{
			"PATH": "/bin", "HOME": "/h",
			"KILROY_WEBHOOK_SECRET": "s3cret", "GITHUB_TOKEN": token, "ANTHROPIC_API_KEY": "sk-bot",
			"GOFLAGS":     token,                            // allowlisted name, secret value
			"https_proxy": "http://bot:" + token + "@proxy", // secret inside a value
			"LANG":        "s3cret-free.UTF-8",              // short secrets match whole values only
		},
		Policy: map[string]string{
			"GH_TOKEN": "x", "NPM_CONFIG__AUTHTOKEN": "x", "MY_SERVICE_API_KEY": "x",
			"AWS_SECRET_ACCESS_KEY": "x", "aws_session_token": "x", "PGPASSWORD": "x",
			"GOOGLE_APPLICATION_CREDENTIALS": "/k.json", "CLAUDECODE": "1", "BOT_CONFIG": "x",
			"KILROY_DATABASE_URL": "postgres://u:p@db", "TZ": "s3cret",
		},
		Stage: map[string]string{
			"KILROY_WEBHOOK_SECRET_FILE": "/s", "KILROY_PRIVATE_KEY_FILE": "/k.pem",
			"KILROY_STAGE_STATUS_PATH": "/run/status.json",
		},
		// Passed on purpose: kept despite the pattern and the value list.
		Extra:        map[string]string{"OPENAI_API_KEY": "sk-agent", "GITHUB_TOKEN": token},
		SecretNames:  []string{"BOT_CONFIG"},
		SecretValues: []string{"s3cret", token, "sk-agent", ""},
	}
	var got []string
	for _, kv := range NodeEnv(spec) {
		k, _, _ := strings.Cut(kv, "=")
		got = append(got, k)
	}
	want := []string{
		"CARGO_HOME", "GITHUB_TOKEN", "GOCACHE", "GOENV", "GOMODCACHE", "GOPATH", "HOME",
		"KILROY_STAGE_STATUS_PATH", "LANG", "OPENAI_API_KEY", "PATH", "RUSTUP_HOME",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("names in NodeEnv (-got +want):\n%s", diff)
	}
}

func TestNodeEnvCLAUDECODEAlwaysStripped(t *testing.T) {
	env := NodeEnv(EnvSpec{Host: map[string]string{}, Extra: map[string]string{"CLAUDECODE": "1"}})
	if v, ok := Lookup(env, "CLAUDECODE"); ok {
		t.Errorf("CLAUDECODE=%q passed through Extra", v)
	}
}

func TestNodeEnvHomeOverride(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("GOCACHE and GOENV defaults below are Linux's")
	}
	env := NodeEnv(EnvSpec{Host: map[string]string{"HOME": "/home/real"}, HomeOverride: "/tmp/agent-home"})
	got := lookups(env, "HOME", "CARGO_HOME", "RUSTUP_HOME", "GOPATH", "GOMODCACHE", "GOCACHE", "GOENV")
	want := map[string]string{
		"HOME":        "/tmp/agent-home",
		"CARGO_HOME":  "/home/real/.cargo",
		"RUSTUP_HOME": "/home/real/.rustup",
		"GOPATH":      "/home/real/go",
		"GOMODCACHE":  "/home/real/go/pkg/mod",
		"GOCACHE":     "/home/real/.cache/go-build",
		"GOENV":       "/home/real/.config/go/env",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("NodeEnv (-got +want):\n%s", diff)
	}
}

func TestNodeEnvSortedUnique(t *testing.T) {
	env := NodeEnv(EnvSpec{
		Host:   map[string]string{"PATH": "/bin", "HOME": "/h", "LANG": "C", "LC_ALL": "C"},
		Policy: map[string]string{"PATH": "/other"},
		Stage:  map[string]string{"KILROY_A": "1", "KILROY_B": "2"},
		Extra:  map[string]string{"KILROY_A": "3"},
	})
	var keys []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
		t.Errorf("NodeEnv keys not sorted and unique: %q", keys)
	}
	if v, _ := Lookup(env, "KILROY_A"); v != "3" {
		t.Errorf("KILROY_A = %q, want the last layer's 3", v)
	}
}

func TestNodeEnvReadsHostByDefault(t *testing.T) {
	t.Setenv("TZ", "Europe/Oslo")
	t.Setenv("GITHUB_TOKEN", "ghs_from_host")
	t.Setenv("KILROY_SANDBOX_TEST", "x")
	if got := HostEnv()["KILROY_SANDBOX_TEST"]; got != "x" {
		t.Errorf("HostEnv()[KILROY_SANDBOX_TEST] = %q, want x", got)
	}
	env := NodeEnv(EnvSpec{})
	got := lookups(env, "TZ", "GITHUB_TOKEN", "KILROY_SANDBOX_TEST")
	want := map[string]string{"TZ": "Europe/Oslo", "GITHUB_TOKEN": "<unset>", "KILROY_SANDBOX_TEST": "<unset>"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("NodeEnv(EnvSpec{}) (-got +want):\n%s", diff)
	}
}

func TestLookup(t *testing.T) {
	env := []string{"PATHX=no", "PATH=/first", "BARE", "PATH=/last", "EMPTY="}
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"PATH", "/last", true},
		{"EMPTY", "", true},
		{"BARE", "", false},
		{"PAT", "", false},
		{"MISSING", "", false},
	}
	for _, tt := range tests {
		if got, ok := Lookup(env, tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}
