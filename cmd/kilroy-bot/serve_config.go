package main

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/appsetup"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/agent"
	"github.com/kilroy-bot/kilroy-bot/schema"
)

// serveConfig is everything `serve` reads from its flags, environment and
// files. loadServeConfig fills it once; the rest of serve only reads it.
type serveConfig struct {
	Listen        string
	DataDir       string // SQLite database, git mirrors, run directories
	DatabaseURL   secret // empty: SQLite in DataDir; may carry a password
	GitHubURL     string // REST API root, with a trailing slash
	AppID         int64
	PrivateKey    secret // PEM, checked to hold an RSA key
	WebhookSecret secret
	ConfigFile    string       // server policy file, "" for none
	Policy        serverPolicy // decoded from ConfigFile
	PublicURL     string       // base of details_url links, no trailing slash; "" for none
	Workers       int
	// InsecureNoSandbox runs nodes without the sandbox (--insecure-no-sandbox).
	InsecureNoSandbox bool
	// HiddenPaths are the files serve read its secrets and policy from;
	// no node may see them (the data dir is hidden too).
	HiddenPaths []string
	// RunDrain is how long shutdown lets running runs finish before it
	// hands them back for the next start to resume; zero gives them the
	// whole of the shutdown hook's time. Not a setting: tests shorten it.
	RunDrain time.Duration
	// StaleAfter is how long a replica may miss its heartbeat before
	// another takes its runs (0: the queue's default, a minute). Not a
	// setting: tests shorten it.
	StaleAfter time.Duration
	// DatabaseWait bounds how long start waits for Postgres to come up (0:
	// defaultDatabaseWait). Not a setting: tests shorten it.
	DatabaseWait time.Duration
}

// serverPolicy is the server policy file (--config): what the operator
// allows every repository. It is decoded strictly, so a misspelt key stops
// the server instead of being ignored:
//
//	app_slug: my-kilroy        # the App's slug: comments it posts are ignored
//	max_annotations: 500       # per check run, at most checks.MaxAnnotations (the default)
//	limits: {max_run_timeout: 6h, max_node_timeout: 2h}   # the defaults: caps on repositories' timeouts
//	agents:                    # the agent backends repositories may use (runner/agent Config)
//	  default: claude
//	  backends:
//	    claude: {kind: cli, cli: claude, models: ["claude-*"]}
//
// Without the file: no App slug, the default annotation cap, and no agent
// backends, so pipelines with agent nodes fail them as not allowed.
type serverPolicy struct {
	AppSlug        string           `yaml:"app_slug"`
	MaxAnnotations int              `yaml:"max_annotations"`
	Agents         agent.Config     `yaml:"agents"`
	Sandbox        sandboxPolicy    `yaml:"sandbox"`
	Limits         serverLimits     `yaml:"limits"`
	Redelivery     serverRedelivery `yaml:"redelivery"`
	Retention      serverRetention  `yaml:"retention"`
	Images         serverImages     `yaml:"images"`
}

// setting is one row of the settings table of DESIGN.md §2.
type setting struct {
	flag, env, def, usage string
}

// The settings of serve, in the order of DESIGN.md §2. The webhook secret
// has a second variable, envWebhookSecret, holding the value itself.
var (
	setListen        = setting{"listen", "KILROY_LISTEN", ":8080", "address to listen on"}
	setDataDir       = setting{"data-dir", "KILROY_DATA_DIR", "./kilroy-data", "directory for the SQLite queue, git mirrors and run directories"}
	setDatabaseURL   = setting{"database-url", "KILROY_DATABASE_URL", "", "postgres:// URL of a queue shared by replicas (default: SQLite in the data dir)"}
	setGitHubURL     = setting{"github-url", "KILROY_GITHUB_URL", ghapp.DefaultBaseURL, "GitHub REST API root (GitHub Enterprise: https://HOST/api/v3/)"}
	setAppID         = setting{"app-id", "KILROY_APP_ID", "", "the GitHub App's id (required; default: the app-id file setup stores in the data dir)"}
	setPrivateKey    = setting{"private-key-file", "KILROY_PRIVATE_KEY_FILE", "", "the App's private key, PEM (required)"}
	setWebhookSecret = setting{"webhook-secret-file", "KILROY_WEBHOOK_SECRET_FILE", "", "file holding the webhook secret (required, or " + envWebhookSecret + ")"}
	setConfig        = setting{"config", "KILROY_CONFIG", "", "server policy YAML (optional)"}
	setPublicURL     = setting{"public-url", "KILROY_PUBLIC_URL", "", "public base URL of this server, for details_url links to /runs/{id}"}
	setWorkers       = setting{"workers", "KILROY_WORKERS", "2", "runs worked at once by this process"}
)

// The sandbox's off switch, a boolean flag outside the settings table.
const (
	flagInsecure = "insecure-no-sandbox"
	envInsecure  = "KILROY_INSECURE_NO_SANDBOX"
)

func isTrue(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}

// envWebhookSecret holds the webhook secret's value, for platforms that
// inject secrets as variables rather than files.
const envWebhookSecret = "KILROY_WEBHOOK_SECRET"

func serveSettings() []setting {
	return []setting{setListen, setDataDir, setDatabaseURL, setGitHubURL, setAppID,
		setPrivateKey, setWebhookSecret, setConfig, setPublicURL, setWorkers}
}

// name is how messages refer to a setting: both ways of giving it.
func (s setting) name() string { return "--" + s.flag + " / " + s.env }

// settingError says which setting is missing or wrong.
type settingError struct {
	name string
	msg  string
}

func (e *settingError) Error() string { return e.name + ": " + e.msg }

func bad(s setting, format string, args ...any) error {
	return &settingError{name: s.name(), msg: fmt.Sprintf(format, args...)}
}

// loadServeConfig reads serve's flags and environment into a serveConfig:
// a flag beats its variable, which beats the default. It reads the key,
// secret and policy files and checks every value, and reports every
// problem at once, each naming its flag and variable. flag.ErrHelp is
// returned for -h.
func loadServeConfig(args []string, getenv func(string) string) (serveConfig, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the caller prints the error and the usage
	flags := map[string]*string{}
	for _, s := range serveSettings() {
		flags[s.flag] = fs.String(s.flag, "", s.usage)
	}
	insecure := fs.Bool(flagInsecure, false, "run pipeline nodes without the sandbox, with the bot's own rights (or "+envInsecure+"=1)")
	if err := fs.Parse(args); err != nil {
		return serveConfig{}, err
	}
	if fs.NArg() > 0 {
		return serveConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	l := loader{flags: flags, given: given, getenv: getenv}
	cfg := l.load()
	cfg.InsecureNoSandbox = *insecure || isTrue(getenv(envInsecure))
	return cfg, errors.Join(l.errs...)
}

// loader collects values and the problems found with them.
type loader struct {
	flags  map[string]*string
	given  map[string]bool
	getenv func(string) string
	errs   []error
}

// value is a setting's flag if given, else its variable if set, else its
// default.
func (l *loader) value(s setting) string {
	if l.given[s.flag] {
		return strings.TrimSpace(*l.flags[s.flag])
	}
	if v := strings.TrimSpace(l.getenv(s.env)); v != "" {
		return v
	}
	return s.def
}

func (l *loader) fail(err error) { l.errs = append(l.errs, err) }

func (l *loader) load() serveConfig {
	cfg := serveConfig{
		Listen:      l.value(setListen),
		DataDir:     l.value(setDataDir),
		DatabaseURL: secret(l.value(setDatabaseURL)),
		ConfigFile:  l.value(setConfig),
	}
	l.check(checkListen(cfg.Listen))
	if cfg.DataDir == "" {
		l.fail(bad(setDataDir, "must not be empty"))
	}
	l.check(checkDatabaseURL(string(cfg.DatabaseURL)))
	cfg.GitHubURL = l.githubURL(cfg.DataDir)
	cfg.PublicURL = strings.TrimSuffix(l.url(setPublicURL, false), "/")
	cfg.AppID = l.appID(cfg.DataDir)
	cfg.Workers = l.workers()
	cfg.PrivateKey = l.privateKey()
	cfg.WebhookSecret = l.webhookSecret()
	cfg.Policy = l.policy(cfg.ConfigFile)
	if cfg.AppID == 0 && cfg.PrivateKey == nil && !appStored(cfg.DataDir) {
		// Every App setting failed and setup never ran here: say the one
		// thing to do before the details.
		l.errs = append([]error{fmt.Errorf("no GitHub App in %s: run `kilroy-bot setup --data-dir %s --public-url URL` first (docs/serve.md §1), or give --app-id, --private-key-file and the webhook secret", cfg.DataDir, cfg.DataDir)}, l.errs...)
	}
	for _, p := range []string{l.value(setPrivateKey), l.secretFile(), cfg.ConfigFile, cfg.Policy.Images.Registries.AuthFile} {
		if abs, err := filepath.Abs(p); p != "" && err == nil {
			cfg.HiddenPaths = append(cfg.HiddenPaths, abs)
		}
	}
	return cfg
}

func (l *loader) check(err error) {
	if err != nil {
		l.fail(err)
	}
}

func checkListen(addr string) error {
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return bad(setListen, "%q is not a listen address such as :8080 or 127.0.0.1:8080", addr)
	}
	return nil
}

// checkDatabaseURL never quotes the URL: it may carry a password.
func checkDatabaseURL(u string) error {
	if u == "" || strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
		return nil
	}
	return bad(setDatabaseURL, "want a postgres:// URL, or nothing for SQLite in the data dir")
}

// url checks an absolute http(s) URL without credentials, query or
// fragment. An API root gets the trailing slash go-github resolves
// against.
func (l *loader) url(s setting, apiRoot bool) string {
	v := l.value(s)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		example := "https://kilroy.example.com"
		if apiRoot {
			example = ghapp.DefaultBaseURL + " or https://HOST/api/v3/"
		}
		l.fail(bad(s, "%q is not an absolute http(s) URL such as %s", v, example))
		return ""
	}
	if u.User != nil {
		l.fail(bad(s, "the URL must not carry credentials"))
		return ""
	}
	if apiRoot && !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u.String()
}

// appStored reports whether kilroy-bot setup stored an App in dataDir.
func appStored(dataDir string) bool {
	_, err := os.Stat(appsetup.FilesIn(dataDir).AppID())
	return err == nil
}

// githubURLFile is where kilroy-bot setup stores the REST API root it
// registered the App on, beside the App's other files.
func githubURLFile(dataDir string) string {
	return filepath.Join(appsetup.FilesIn(dataDir).Dir, "github-url")
}

// githubURL is --github-url or KILROY_GITHUB_URL, else the URL setup
// stored in the data dir (a GitHub Enterprise App), else the default.
func (l *loader) githubURL(dataDir string) string {
	if !l.given[setGitHubURL.flag] && strings.TrimSpace(l.getenv(setGitHubURL.env)) == "" && dataDir != "" {
		if b, err := os.ReadFile(githubURLFile(dataDir)); err == nil && strings.TrimSpace(string(b)) != "" {
			s := setGitHubURL
			s.def = strings.TrimSpace(string(b))
			return l.url(s, true)
		}
	}
	return l.url(setGitHubURL, true)
}

// appID is --app-id or KILROY_APP_ID, else the app-id file kilroy-bot
// setup stored in the data dir.
func (l *loader) appID(dataDir string) int64 {
	v, file := l.value(setAppID), ""
	if v == "" && dataDir != "" {
		file = appsetup.FilesIn(dataDir).AppID()
		b, err := os.ReadFile(file)
		switch {
		case err == nil:
			v = strings.TrimSpace(string(b))
		case errors.Is(err, os.ErrNotExist):
			l.fail(bad(setAppID, "required: the GitHub App's numeric id, from its settings page "+
				"(kilroy-bot setup stores it in %s, which does not exist)", file))
			return 0
		default:
			l.fail(bad(setAppID, "not set, and cannot read %s: %v", file, pathErr(err)))
			return 0
		}
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		if file != "" {
			l.fail(bad(setAppID, "not set, and %s holds %q, not a positive number", file, v))
		} else {
			l.fail(bad(setAppID, "%q is not a positive number", v))
		}
		return 0
	}
	return id
}

func (l *loader) workers() int {
	v := l.value(setWorkers)
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		l.fail(bad(setWorkers, "%q is not a positive number", v))
		return 0
	}
	return n
}

// privateKey reads and parses the App's key, so that a wrong file stops
// the server now rather than at the first GitHub call. Messages name the
// file, never its content.
func (l *loader) privateKey() secret {
	path := l.value(setPrivateKey)
	if path == "" {
		l.fail(bad(setPrivateKey, "required: the App's private key file (PEM), downloaded from its settings page"))
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		l.fail(bad(setPrivateKey, "cannot read %s: %v", path, pathErr(err)))
		return nil
	}
	if err := checkRSAKey(data); err != nil {
		l.fail(bad(setPrivateKey, "%s: %v", path, err))
		return nil
	}
	return secret(data)
}

func checkRSAKey(data []byte) error {
	block, _ := pem.Decode(data)
	if block == nil {
		return errors.New("not a PEM file")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil && k != nil {
		return nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		// x509's messages describe the encoding, not the key's bytes.
		return fmt.Errorf("not an RSA private key (%s block)", block.Type)
	}
	if _, ok := k.(*rsa.PrivateKey); !ok {
		return fmt.Errorf("a %T, but GitHub Apps sign with RSA keys", k)
	}
	return nil
}

// webhookSecret reads the secret from --webhook-secret-file, else from
// KILROY_WEBHOOK_SECRET_FILE or KILROY_WEBHOOK_SECRET, which must not both
// be set. Surrounding white space is dropped: files usually end in a
// newline, and GitHub's secret field keeps none.
func (l *loader) webhookSecret() secret {
	path := ""
	switch fileEnv, valueEnv := l.getenv(setWebhookSecret.env), l.getenv(envWebhookSecret); {
	case l.given[setWebhookSecret.flag]:
		path = strings.TrimSpace(*l.flags[setWebhookSecret.flag])
		if path == "" {
			l.fail(bad(setWebhookSecret, "empty file name"))
			return nil
		}
	case fileEnv != "" && valueEnv != "":
		l.fail(&settingError{name: setWebhookSecret.env + " / " + envWebhookSecret, msg: "both are set: set only one"})
		return nil
	case fileEnv != "":
		path = strings.TrimSpace(fileEnv)
	case strings.TrimSpace(valueEnv) != "":
		return secret(strings.TrimSpace(valueEnv))
	default:
		l.fail(&settingError{
			name: "--" + setWebhookSecret.flag + " / " + setWebhookSecret.env + " / " + envWebhookSecret,
			msg:  "required: the webhook secret configured in the App's settings; serve refuses unsigned deliveries",
		})
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		l.fail(bad(setWebhookSecret, "cannot read %s: %v", path, pathErr(err)))
		return nil
	}
	s := bytes.TrimSpace(data)
	if len(s) == 0 {
		l.fail(bad(setWebhookSecret, "%s is empty", path))
		return nil
	}
	return secret(s)
}

// secretFile is the webhook secret's file, if it came from one.
func (l *loader) secretFile() string {
	if l.given[setWebhookSecret.flag] {
		return strings.TrimSpace(*l.flags[setWebhookSecret.flag])
	}
	return strings.TrimSpace(l.getenv(setWebhookSecret.env))
}

// policy decodes the server policy file strictly: unknown keys, a second
// document and invalid agent backends are errors.
func (l *loader) policy(path string) serverPolicy {
	var p serverPolicy
	if path == "" {
		return p
	}
	data, err := os.ReadFile(path)
	if err != nil {
		l.fail(bad(setConfig, "cannot read %s: %v", path, pathErr(err)))
		return p
	}
	if err := decodePolicy(path, data, &p); err != nil {
		l.fail(bad(setConfig, "%v", err)) // names the file
	}
	return p
}

// decodePolicy decodes a server policy file as strictly as the bot reads
// a repository's .kilroy/config.yml, with the same messages: each problem
// at file:line:col, unknown keys with the known ones and a did-you-mean,
// then the shipped schema, then the agent backends.
func decodePolicy(file string, data []byte, p *serverPolicy) error {
	loc, err := policy.DecodeYAML(file, data, schema.ServerPolicyURL, schema.ServerPolicy(), p)
	if err != nil {
		return err
	}
	if _, err := p.Sandbox.sandboxConfig(nil, "", ""); err != nil {
		return err
	}
	if _, err := p.Limits.caps(loc); err != nil {
		return err
	}
	if _, _, err := p.Redelivery.options(loc); err != nil {
		return err
	}
	if _, _, err := p.Retention.options(loc); err != nil {
		return err
	}
	if _, err := retentionDuration(p.Retention.Images, defaultImageRetention, loc, "images"); err != nil {
		return err
	}
	if err := p.Images.check(loc); err != nil {
		return err
	}
	// agent.New validates the backends; the Agent itself is built per run.
	if _, err := agent.New(p.Agents, agent.Deps{}); err != nil {
		if ke, ok := errors.AsType[*agent.KeyError](err); ok {
			return loc.Errorf(append([]string{"agents"}, ke.Path...), "%s", ke.Msg)
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// pathErr drops the path from an *os.PathError, which the message names
// already.
func pathErr(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	return err
}

// LogValue lists the settings without the secrets, for the start line.
func (c serveConfig) LogValue() slog.Value {
	queue := "sqlite"
	if len(c.DatabaseURL) > 0 {
		queue = "postgres"
	}
	return slog.GroupValue(
		slog.String("listen", c.Listen),
		slog.String("data_dir", c.DataDir),
		slog.String("queue", queue),
		slog.String("github_url", c.GitHubURL),
		slog.Int64("app_id", c.AppID),
		slog.String("config", c.ConfigFile),
		slog.String("public_url", c.PublicURL),
		slog.Int("workers", c.Workers),
		slog.Bool("sandbox", !c.InsecureNoSandbox),
	)
}

// secret is key material, the webhook secret or a database URL. Every way
// of printing it prints a placeholder, so that a stray log line or %v of a
// config cannot leak it; code that needs the value converts explicitly.
type secret []byte

const redactedValue = "[REDACTED]"

func (s secret) Format(f fmt.State, _ rune) { io.WriteString(f, redactedValue) }
func (s secret) LogValue() slog.Value       { return slog.StringValue(redactedValue) }
func (s secret) MarshalText() ([]byte, error) {
	return []byte(redactedValue), nil
}
