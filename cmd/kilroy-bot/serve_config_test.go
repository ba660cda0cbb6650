package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/appsetup"
	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
	"github.com/kilroy-bot/kilroy-bot/schema"
	"github.com/kilroy-bot/kilroy-bot/schema/schematest"
)

// serveFiles are the files a serve configuration points at.
type serveFiles struct {
	key, ecKey, notPEM, secret, emptySecret, policy, badPolicy string
}

func writeServeFiles(t *testing.T) serveFiles {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ekDER, err := x509.MarshalPKCS8PrivateKey(ek)
	if err != nil {
		t.Fatal(err)
	}
	return serveFiles{
		key:         write("app.pem", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)})),
		ecKey:       write("ec.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ekDER})),
		notPEM:      write("key.txt", []byte("not a key\n")),
		secret:      write("secret", []byte("file-secret-value\n")),
		emptySecret: write("empty", []byte("\n")),
		policy:      write("policy.yml", []byte("app_slug: my-kilroy\nmax_annotations: 200\nagents:\n  default: claude\n  backends:\n    claude: {kind: cli, cli: claude}\n")),
		badPolicy:   write("bad.yml", []byte("app_slug: x\nmax_annotation: 5\n")),
	}
}

// envOf is a getenv over a map.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadServeConfigErrors(t *testing.T) {
	f := writeServeFiles(t)
	base := map[string]string{
		"KILROY_APP_ID":           "42",
		"KILROY_PRIVATE_KEY_FILE": f.key,
		"KILROY_WEBHOOK_SECRET":   "value-secret-1234",
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string // substrings of the error
	}{
		{"no app id", nil, with("KILROY_APP_ID", ""), []string{"--app-id / KILROY_APP_ID: required"}},
		{"app id not a number", nil, with("KILROY_APP_ID", "forty-two"), []string{"--app-id / KILROY_APP_ID", `"forty-two" is not a positive number`}},
		{"app id flag not a number", []string{"--app-id", "-3"}, base, []string{"--app-id / KILROY_APP_ID", `"-3"`}},
		{"no key", nil, with("KILROY_PRIVATE_KEY_FILE", ""), []string{"--private-key-file / KILROY_PRIVATE_KEY_FILE: required"}},
		{"unreadable key", nil, with("KILROY_PRIVATE_KEY_FILE", filepath.Join(t.TempDir(), "missing.pem")), []string{"--private-key-file / KILROY_PRIVATE_KEY_FILE", "cannot read", "no such file"}},
		{"key not PEM", nil, with("KILROY_PRIVATE_KEY_FILE", f.notPEM), []string{"--private-key-file / KILROY_PRIVATE_KEY_FILE", "not a PEM file"}},
		{"key not RSA", nil, with("KILROY_PRIVATE_KEY_FILE", f.ecKey), []string{"--private-key-file / KILROY_PRIVATE_KEY_FILE", "RSA"}},
		{"no secret", nil, with("KILROY_WEBHOOK_SECRET", ""), []string{"--webhook-secret-file / KILROY_WEBHOOK_SECRET_FILE / KILROY_WEBHOOK_SECRET: required"}},
		{"secret file empty", nil, with("KILROY_WEBHOOK_SECRET", "", "KILROY_WEBHOOK_SECRET_FILE", f.emptySecret), []string{"--webhook-secret-file / KILROY_WEBHOOK_SECRET_FILE", "is empty"}},
		{"secret file missing", []string{"--webhook-secret-file", filepath.Join(t.TempDir(), "nope")}, base, []string{"--webhook-secret-file / KILROY_WEBHOOK_SECRET_FILE", "cannot read"}},
		{"two secrets", nil, with("KILROY_WEBHOOK_SECRET_FILE", f.secret), []string{"KILROY_WEBHOOK_SECRET_FILE / KILROY_WEBHOOK_SECRET: both are set"}},
		{"bad github url", nil, with("KILROY_GITHUB_URL", "api.github.com"), []string{"--github-url / KILROY_GITHUB_URL", "not an absolute http(s) URL"}},
		{"github url with credentials", []string{"--github-url", "https://u:p@ghe.example.com/api/v3/"}, base, []string{"--github-url / KILROY_GITHUB_URL", "credentials"}},
		{"bad public url", nil, with("KILROY_PUBLIC_URL", "ftp://x"), []string{"--public-url / KILROY_PUBLIC_URL"}},
		{"workers not numeric", nil, with("KILROY_WORKERS", "two"), []string{"--workers / KILROY_WORKERS", `"two" is not a positive number`}},
		{"workers zero", []string{"--workers=0"}, base, []string{"--workers / KILROY_WORKERS"}},
		{"bad listen", []string{"--listen", "8080"}, base, []string{"--listen / KILROY_LISTEN"}},
		{"bad database url", nil, with("KILROY_DATABASE_URL", "mysql://root:hunter2@db/x"), []string{"--database-url / KILROY_DATABASE_URL", "postgres://"}},
		{"policy unreadable", []string{"--config", filepath.Join(t.TempDir(), "nope.yml")}, base, []string{"--config / KILROY_CONFIG", "cannot read"}},
		{"policy unknown key", nil, with("KILROY_CONFIG", f.badPolicy), []string{"--config / KILROY_CONFIG", "bad.yml:2:1: unknown key \"max_annotation\"", `did you mean "max_annotations"?`}},
		{"several at once", nil, map[string]string{}, []string{"--app-id", "--private-key-file", "KILROY_WEBHOOK_SECRET"}},
		{"unknown flag", []string{"--verbose"}, base, []string{"flag provided but not defined"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadServeConfig(tt.args, envOf(tt.env))
			if err == nil {
				t.Fatalf("loadServeConfig: no error, want one naming %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, leak := range []string{"value-secret-1234", "hunter2"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q leaks %q", err, leak)
				}
			}
		})
	}
}

func TestLoadServeConfig(t *testing.T) {
	f := writeServeFiles(t)
	env := map[string]string{
		"KILROY_LISTEN":              ":9000",
		"KILROY_DATA_DIR":            "/env/data",
		"KILROY_GITHUB_URL":          "https://ghe.example.com/api/v3",
		"KILROY_APP_ID":              "7",
		"KILROY_PRIVATE_KEY_FILE":    f.key,
		"KILROY_WEBHOOK_SECRET_FILE": f.secret,
		"KILROY_PUBLIC_URL":          "https://kilroy.example.com/",
		"KILROY_WORKERS":             "3",
		"KILROY_CONFIG":              f.policy,
	}
	t.Run("env", func(t *testing.T) {
		cfg, err := loadServeConfig(nil, envOf(env))
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%s %s %s %d %s %d %q %s %d", cfg.Listen, cfg.DataDir, cfg.GitHubURL, cfg.AppID,
			cfg.PublicURL, cfg.Workers, []byte(cfg.WebhookSecret), cfg.Policy.AppSlug, cfg.Policy.MaxAnnotations)
		want := `:9000 /env/data https://ghe.example.com/api/v3/ 7 https://kilroy.example.com 3 "file-secret-value" my-kilroy 200`
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("config (-got +want):\n%s", diff)
		}
		if _, ok := cfg.Policy.Agents.Backends["claude"]; !ok {
			t.Errorf("policy agents = %+v, want the claude backend", cfg.Policy.Agents)
		}
	})
	t.Run("flags beat env", func(t *testing.T) {
		cfg, err := loadServeConfig([]string{
			"--listen", "127.0.0.1:0", "--data-dir", "/flag/data", "--app-id", "8", "--workers", "5",
			"--github-url", "http://127.0.0.1:1234/api/v3/", "--webhook-secret-file", f.secret,
		}, envOf(env))
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%s %s %d %d %s", cfg.Listen, cfg.DataDir, cfg.AppID, cfg.Workers, cfg.GitHubURL)
		want := "127.0.0.1:0 /flag/data 8 5 http://127.0.0.1:1234/api/v3/"
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("config (-got +want):\n%s", diff)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		cfg, err := loadServeConfig(nil, envOf(map[string]string{
			"KILROY_APP_ID": "1", "KILROY_PRIVATE_KEY_FILE": f.key, "KILROY_WEBHOOK_SECRET": "s3cret-value",
		}))
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%s %s %s %d %q %q", cfg.Listen, cfg.DataDir, cfg.GitHubURL, cfg.Workers, cfg.PublicURL, cfg.ConfigFile)
		want := `:8080 ./kilroy-data https://api.github.com/ 2 "" ""`
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("config (-got +want):\n%s", diff)
		}
	})
}

// TestServeConfigHidesSecrets prints and logs a config every way a
// careless line could, and finds no secret.
func TestServeConfigHidesSecrets(t *testing.T) {
	f := writeServeFiles(t)
	cfg, err := loadServeConfig([]string{"--database-url", "postgres://kilroy:dbpass-9876@db/kilroy"}, envOf(map[string]string{
		"KILROY_APP_ID": "1", "KILROY_PRIVATE_KEY_FILE": f.key, "KILROY_WEBHOOK_SECRET": "value-secret-1234",
	}))
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	logger := newTestLogger(&logged)
	logger.Info("start", "config", cfg, "secret", cfg.WebhookSecret, "key", cfg.PrivateKey)
	out := fmt.Sprintf("%v %+v %#v %s %x %d", cfg, cfg, cfg, cfg.WebhookSecret, cfg.PrivateKey, cfg.DatabaseURL) + logged.String()
	for _, leak := range []string{"value-secret-1234", "PRIVATE KEY", "dbpass-9876", "76616c7565"} {
		if strings.Contains(out, leak) {
			t.Errorf("output leaks %q:\n%s", leak, out)
		}
	}
	if !strings.Contains(logged.String(), `"queue":"postgres"`) {
		t.Errorf("log line lacks the settings: %s", logged.String())
	}
}

func TestRunServeExitCodes(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runServe(context.Background(), nil, envOf(map[string]string{"KILROY_APP_ID": "1"}), &stdout, &stderr)
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, w := range []string{"--private-key-file / KILROY_PRIVATE_KEY_FILE", "KILROY_WEBHOOK_SECRET"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr does not name %s:\n%s", w, stderr.String())
		}
	}
	stdout.Reset()
	if code := runServe(context.Background(), []string{"-h"}, envOf(nil), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "KILROY_WEBHOOK_SECRET_FILE") {
		t.Errorf("serve -h: exit %d, stdout:\n%s", code, stdout.String())
	}
}

// TestDecodePolicy: the server policy file is read as strictly as a
// repository's config.yml and its problems read the same way: file, line
// and column, the known keys, a did-you-mean.
func TestDecodePolicy(t *testing.T) {
	tests := []struct {
		name, yaml string
		wantErr    []string
	}{
		{name: "empty", yaml: ""},
		{name: "comments only", yaml: schema.ServerPolicyModeline + "\n"},
		{name: "slug only", yaml: "app_slug: kb\n"},
		{name: "unknown top key", yaml: "app_slugg: kb\n",
			wantErr: []string{`policy.yml:1:1: unknown key "app_slugg" at top level (known: app_slug, max_annotations, agents, sandbox, limits, redelivery, retention, images); did you mean "app_slug"?`}},
		{name: "unknown backend key", yaml: "agents:\n  backends:\n    x:\n      kind: cli\n      cli: claude\n      modles: [a]\n",
			wantErr: []string{`policy.yml:6:7: unknown key "modles" in agents.backends.x (known: kind, cli, api,`, `did you mean "models"?`}},
		{name: "bad kind", yaml: "agents:\n  backends:\n    x: {kind: telepathy}\n",
			wantErr: []string{"policy.yml:3:9: agents.backends.x.kind: value must be one of 'cli', 'api'"}},
		{name: "cli without cli", yaml: "agents:\n  backends:\n    x:\n      kind: cli\n",
			wantErr: []string{`policy.yml:3:5: missing key "cli" in agents.backends.x`}},
		{name: "duration", yaml: "agents:\n  limits:\n    timeout: 45 minutes\n",
			wantErr: []string{`policy.yml:3:5: agents.limits.timeout: "45 minutes" is not valid (`, "15m"}},
		{name: "misspelt default", yaml: "agents:\n  default: cluade\n  backends:\n    claude: {kind: cli, cli: claude}\n",
			wantErr: []string{`policy.yml:2:3: agents.default: "cluade" is not one of agents.backends (claude); did you mean "claude"?`}},
		{name: "secret env", yaml: "agents:\n  backends:\n    x:\n      kind: cli\n      cli: claude\n      env: {MY_TOKEN: t}\n",
			wantErr: []string{"policy.yml:6:7: agents.backends.x.env: MY_TOKEN looks like a secret"}},
		{name: "runtime without node", yaml: "agents:\n  runtime: /nonexistent/kilroy-agent-runtime\n",
			wantErr: []string{"policy.yml:2:3: agents.runtime: agent runtime: lstat /nonexistent"}},
		{name: "relative runtime", yaml: "agents:\n  runtime: agent-clis\n",
			wantErr: []string{`policy.yml:2:3: agents.runtime: "agent-clis" is not valid (The bot's agent runtime: an absolute directory`}},
		{name: "too many annotations", yaml: "max_annotations: 100000\n",
			wantErr: []string{"policy.yml:1:1: max_annotations: maximum: got 100,000, want 1,000"}},
		{name: "duplicate key", yaml: "app_slug: a\napp_slug: b\n",
			wantErr: []string{`policy.yml:2:1: duplicate key "app_slug"`}},
		{name: "limits", yaml: "limits: {max_run_timeout: 3h, max_node_timeout: 90m}\n"},
		{name: "images", yaml: "images:\n  default: docker.io/library/golang:1.23\n  allow: [\"docker.io/library/golang:*\", host]\n" +
			"  registries: {auth_file: /etc/kilroy/registries.json, insecure: [\"registry.internal:5000\"]}\n  max_bytes: 4GiB\n" +
			"retention: {images: 3d}\n"},
		{name: "images short pattern", yaml: "images:\n  allow: [\"golang:*\"]\n",
			wantErr: []string{"policy.yml:2:3: images.allow: item 1: image pattern \"golang:*\": must start with a registry host"}},
		{name: "images default not a reference", yaml: "images:\n  default: Golang\n",
			wantErr: []string{`policy.yml:2:3: images.default: "Golang" is not an image reference`}},
		{name: "images retention", yaml: "retention:\n  images: soon\n",
			wantErr: []string{`policy.yml:2:3: retention.images: "soon" is not a positive duration`}},
		{name: "limits not a duration", yaml: "limits:\n  max_node_timeout: two hours\n",
			wantErr: []string{"policy.yml:2:3: limits.max_node_timeout:", "write a duration such as 6h or 90m"}},
		{name: "limits unknown key", yaml: "limits:\n  run_timeout: 3h\n",
			wantErr: []string{`policy.yml:2:3: unknown key "run_timeout" in limits (known: max_run_timeout, max_node_timeout, max_runs_per_installation, max_runs_per_repository, max_graph_nodes, max_graph_edges, max_pipelines, max_checkout_files, max_checkout_bytes)`}},
		{name: "run caps", yaml: "limits: {max_runs_per_installation: 4, max_runs_per_repository: 2}\n"},
		{name: "run cap negative", yaml: "limits:\n  max_runs_per_repository: -1\n",
			wantErr: []string{"policy.yml:2:3: limits.max_runs_per_repository: minimum: got -1, want 0"}},
		{name: "run cap not a number", yaml: "limits:\n  max_runs_per_installation: many\n",
			wantErr: []string{"policy.yml:2:", "max_runs_per_installation"}},
		{name: "redelivery", yaml: "redelivery: {every: 5m, window: 24h}\n"},
		{name: "redelivery off", yaml: "redelivery: {every: off}\n"},
		{name: "redelivery not a duration", yaml: "redelivery:\n  every: often\n",
			wantErr: []string{"policy.yml:2:3: redelivery.every:", "write a duration such as 10m, or off"}},
		{name: "redelivery window past GitHub's", yaml: "redelivery:\n  window: 7d\n",
			wantErr: []string{`policy.yml:2:3: redelivery.window: "7d" is longer than the 72h GitHub keeps deliveries`}},
		{name: "retention", yaml: "retention: {runs: 7d, branches: 36h, remote_branches: 30d, mirrors: off, every: 10m}\n"},
		{name: "retention not a duration", yaml: "retention:\n  runs: a week\n",
			wantErr: []string{`policy.yml:2:3: retention.runs: "a week" is not a positive duration (write a duration such as 14d or 36h, or off)`}},
		{name: "retention every off", yaml: "retention:\n  every: off\n",
			wantErr: []string{"policy.yml:2:3: retention.every: off is not a time between sweeps"}},
		{name: "retention unknown key", yaml: "retention:\n  logs: 3d\n",
			wantErr: []string{`unknown key "logs" in retention (known: runs, branches, remote_branches, mirrors, caches, every, images)`}},
		{name: "two documents", yaml: "app_slug: a\n---\napp_slug: b\n", wantErr: []string{"only one YAML document"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p serverPolicy
			err := decodePolicy("policy.yml", []byte(tt.yaml), &p)
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatalf("decodePolicy: %v", err)
			}
			if len(tt.wantErr) > 0 && err == nil {
				t.Fatalf("decodePolicy accepted it, want %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("decodePolicy: %v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// TestServerPolicySchema keeps the shipped schema of the file in step with
// the types it is decoded into and the annotation cap of the checks.
func TestServerPolicySchema(t *testing.T) {
	schematest.MatchesType(t, schema.ServerPolicy(), reflect.TypeFor[serverPolicy]())
	var doc struct {
		Properties struct {
			MaxAnnotations struct {
				Maximum int `json:"maximum"`
			} `json:"max_annotations"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema.ServerPolicy(), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Properties.MaxAnnotations.Maximum; got != checks.MaxAnnotations {
		t.Errorf("schema: max_annotations maximum %d, want checks.MaxAnnotations %d", got, checks.MaxAnnotations)
	}
}

// TestServePolicyDocExample decodes the example of docs/serve.md's server
// policy section, so the documented file is one the server accepts.
func TestServePolicyDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/serve.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## 3. Server policy file")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	example, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/serve.md: no yaml block in the server policy section")
	}
	var p serverPolicy
	if err := decodePolicy("docs/serve.md example", []byte(example), &p); err != nil {
		t.Errorf("the documented example is refused: %v", err)
	}
	if len(p.Agents.Backends) == 0 {
		t.Errorf("the documented example decodes to no backends: %+v", p)
	}
}

// The sandbox section of the server policy: sizes and durations are read
// with their units, and a wrong one names its key.
func TestSandboxPolicy(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       sandbox.Limits
		network    sandbox.Network
		wantErr    string
	}{
		{name: "defaults", yaml: "sandbox: {}\n", network: sandbox.NetworkPublic},
		{name: "network true", yaml: "sandbox: {network: true}\n", network: sandbox.NetworkPublic},
		{name: "network host", yaml: "sandbox: {network: host}\n", network: sandbox.NetworkHost},
		{name: "network none", yaml: "sandbox: {network: none}\n", network: sandbox.NetworkNone},
		{name: "network_allow", yaml: "sandbox: {network: public, network_allow: [10.1.0.0/16, fd12::1]}\n", network: sandbox.NetworkPublic},
		{name: "bad network", yaml: "sandbox: {network: lan}\n", wantErr: "sandbox.network"},
		{name: "bad network_allow", yaml: "sandbox: {network_allow: [10.1.0.0/33]}\n", wantErr: "sandbox.network_allow"},
		{name: "network_allow without public", yaml: "sandbox: {network: none, network_allow: [10.1.0.0/16]}\n", wantErr: "network_allow"},
		{name: "all set", yaml: "sandbox:\n  network: false\n  limits: {processes: 64, memory: 512MiB, file_size: 1GiB, cpu_time: 30m}\n",
			want: sandbox.Limits{Processes: 64, MemoryBytes: 512 << 20, FileSizeBytes: 1 << 30, CPUTime: 30 * time.Minute}, network: sandbox.NetworkNone},
		{name: "bad size", yaml: "sandbox:\n  limits: {memory: 3 gigs}\n", wantErr: "sandbox.limits.memory"},
		{name: "bad duration", yaml: "sandbox:\n  limits: {cpu_time: forever}\n", wantErr: "sandbox.limits.cpu_time"},
		{name: "relative read_only", yaml: "sandbox:\n  read_only: [tools]\n", wantErr: "read_only"},
		{name: "caches", yaml: "sandbox:\n  caches: {scope: installation, max_bytes: 2GiB}\n", network: sandbox.NetworkPublic},
		{name: "caches off", yaml: "sandbox:\n  caches: {scope: repository, max_bytes: off}\n", network: sandbox.NetworkPublic},
		{name: "caches bad scope", yaml: "sandbox:\n  caches: {scope: everyone}\n", wantErr: "caches.scope"},
		{name: "caches bad size", yaml: "sandbox:\n  caches: {max_bytes: lots}\n", wantErr: "caches.max_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p serverPolicy
			err := decodePolicy("policy.yml", []byte(tc.yaml), &p)
			var cfg sandbox.Config
			if err == nil {
				cfg, err = p.Sandbox.sandboxConfig(nil, "", "")
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{cfg.Limits, cfg.Network}, []any{tc.want, tc.network}); diff != "" {
				t.Errorf("limits, network (-got +want):\n%s", diff)
			}
		})
	}
}

// --insecure-no-sandbox puts a warning at the top of every check summary.
func TestInsecureBanner(t *testing.T) {
	if !strings.Contains(insecureBanner(serveConfig{InsecureNoSandbox: true}), "without a sandbox") {
		t.Errorf("the insecure banner does not say nodes run without a sandbox")
	}
	if insecureBanner(serveConfig{}) != "" {
		t.Errorf("a banner with the sandbox on")
	}
	host := serveConfig{}
	host.Policy.Sandbox.Network = "host"
	if !strings.Contains(insecureBanner(host), "host's network") {
		t.Errorf("the banner of sandbox.network: host does not say nodes share the host's network: %q", insecureBanner(host))
	}
}

// Without --app-id or KILROY_APP_ID, serve reads the app-id file setup
// stores in the data dir; either setting beats the file, and a missing or
// wrong file is named in the error.
func TestServeConfigAppIDFromDataDir(t *testing.T) {
	f := writeServeFiles(t)
	withFile := func(content string) string {
		dir := t.TempDir()
		files := appsetup.FilesIn(dir)
		if err := os.MkdirAll(files.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(files.AppID(), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	good, garbled, empty := withFile("123456\n"), withFile("12x\n"), t.TempDir()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    int64
		wantErr []string
	}{
		{"file", nil, map[string]string{"KILROY_DATA_DIR": good}, 123456, nil},
		{"variable beats file", nil, map[string]string{"KILROY_DATA_DIR": good, "KILROY_APP_ID": "7"}, 7, nil},
		{"flag beats file", []string{"--app-id", "8", "--data-dir", good}, nil, 8, nil},
		{"no file", nil, map[string]string{"KILROY_DATA_DIR": empty}, 0,
			[]string{"--app-id / KILROY_APP_ID: required", appsetup.FilesIn(empty).AppID(), "does not exist"}},
		// The container's case: the key path points into a data dir setup
		// never wrote. The first line says what to do.
		{"no app at all", nil, map[string]string{"KILROY_DATA_DIR": empty, "KILROY_PRIVATE_KEY_FILE": appsetup.FilesIn(empty).PrivateKey()}, 0,
			[]string{"no GitHub App in " + empty + ": run `kilroy-bot setup --data-dir " + empty + " --public-url URL` first"}},
		{"file not a number", nil, map[string]string{"KILROY_DATA_DIR": garbled}, 0,
			[]string{"--app-id / KILROY_APP_ID", appsetup.FilesIn(garbled).AppID(), `"12x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"KILROY_PRIVATE_KEY_FILE": f.key, "KILROY_WEBHOOK_SECRET": "value-secret-1234"}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, err := loadServeConfig(tt.args, envOf(env))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(cfg.AppID, tt.want); diff != "" {
					t.Errorf("app id (-got +want):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one naming %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if setupHint := strings.Contains(err.Error(), "run `kilroy-bot setup"); setupHint != (tt.name == "no app at all") {
				t.Errorf("error %q: mentions setup %v, want it only when no App setting works", err, setupHint)
			}
		})
	}
}

// Without --github-url or KILROY_GITHUB_URL, serve uses the URL setup
// stored beside the App (GitHub Enterprise); either setting beats it.
func TestServeConfigGitHubURLFromDataDir(t *testing.T) {
	f := writeServeFiles(t)
	const ghe = "https://ghe.example.com/api/v3/"
	stored := t.TempDir()
	if err := os.MkdirAll(appsetup.FilesIn(stored).Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(githubURLFile(stored), []byte(ghe+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"stored", nil, map[string]string{"KILROY_DATA_DIR": stored}, ghe},
		{"nothing stored", nil, map[string]string{"KILROY_DATA_DIR": t.TempDir()}, "https://api.github.com/"},
		{"variable beats file", nil, map[string]string{"KILROY_DATA_DIR": stored, "KILROY_GITHUB_URL": "https://other.example.com/api/v3"}, "https://other.example.com/api/v3/"},
		{"flag beats file", []string{"--github-url", "https://api.github.com/", "--data-dir", stored}, nil, "https://api.github.com/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"KILROY_APP_ID": "1", "KILROY_PRIVATE_KEY_FILE": f.key, "KILROY_WEBHOOK_SECRET": "value-secret-1234"}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, err := loadServeConfig(tt.args, envOf(env))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.GitHubURL != tt.want {
				t.Errorf("GitHub URL %q, want %q", cfg.GitHubURL, tt.want)
			}
		})
	}
}
