// Package deploy holds the container deployment (the Dockerfile at the
// repository root and compose.yml here) and its tests: the compose file is
// checked against the image and setup's file layout everywhere; the image
// is built and started where a container engine works.
package deploy

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/kilroy-bot/kilroy-bot/appsetup"
)

type composeFile struct {
	Name     string
	Services map[string]composeService
	Volumes  map[string]struct{ Name string }
}

type composeService struct {
	Build *struct {
		Context, Dockerfile string
		Args                map[string]string
	}
	Image       string
	EnvFile     string                                `yaml:"env_file"`
	SecurityOpt []string                              `yaml:"security_opt"`
	Devices     []string                              `yaml:"devices"`
	Environment map[string]string                     `yaml:"environment"`
	Volumes     []string                              `yaml:"volumes"`
	Ports       []string                              `yaml:"ports"`
	Profiles    []string                              `yaml:"profiles"`
	DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
	Healthcheck struct{ Test []string }
}

func readCompose(t *testing.T, name string) composeFile {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

// dockerfileEnv is the value of an ENV variable in the Dockerfile.
func dockerfileEnv(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	t.Fatalf("Dockerfile sets no %s", name)
	return ""
}

// TestComposeMatchesImageAndSetup: the bot service runs with the security
// options bubblewrap needs, keeps the image's data dir on a volume named
// after the project (no fixed name, so -p keeps deployments apart), reads its settings from an env file and the key and
// secret where setup stores them in that data dir, and Postgres is not in
// compose.yml (podman-compose 1.0.3 has no profiles).
func TestComposeMatchesImageAndSetup(t *testing.T) {
	c := readCompose(t, "compose.yml")
	bot, ok := c.Services["bot"]
	if !ok {
		t.Fatal("compose.yml has no bot service")
	}
	data := dockerfileEnv(t, "KILROY_DATA_DIR")
	files := appsetup.FilesIn(data)
	got := map[string]any{
		"name":     c.Name,
		"security": bot.SecurityOpt,
		"devices":  bot.Devices,
		"key":      bot.Environment["KILROY_PRIVATE_KEY_FILE"],
		"secret":   bot.Environment["KILROY_WEBHOOK_SECRET_FILE"],
		"env file": bot.EnvFile != "",
		"volume":   slices.Contains(bot.Volumes, "kilroy-data:"+data),
		"volumes":  c.Volumes,
		"build":    bot.Build != nil && filepath.Clean(bot.Build.Context) == ".." && bot.Build.Dockerfile == "Dockerfile",
		"services": slices.Sorted(maps.Keys(c.Services)),
	}
	want := map[string]any{
		"name":     "kilroy",
		"security": []string{"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"},
		"devices":  []string{"/dev/net/tun:/dev/net/tun"}, // pasta's, as the image's user (network public)
		"key":      files.PrivateKey(),
		"secret":   files.WebhookSecret(),
		"env file": true,
		"volume":   true,
		"volumes":  map[string]struct{ Name string }{"kilroy-data": {}},
		"build":    true,
		"services": []string{"bot"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("compose.yml (-got +want):\n%s", diff)
	}
}

// TestComposePostgres: compose.postgres.yml adds Postgres, with its data
// on a volume named after the project, and points the bot's queue at
// it once it is healthy, with the user, database and password it creates.
func TestComposePostgres(t *testing.T) {
	c := readCompose(t, "compose.postgres.yml")
	pg, bot := c.Services["postgres"], c.Services["bot"]
	url := bot.Environment["KILROY_DATABASE_URL"]
	got := map[string]any{
		"depends on":  bot.DependsOn,
		"url":         strings.Replace(url, pg.Environment["POSTGRES_PASSWORD"], "PASSWORD", 1),
		"volumes":     c.Volumes,
		"healthcheck": pg.Healthcheck.Test,
	}
	want := map[string]any{
		"depends on": map[string]struct{ Condition string }{"postgres": {Condition: "service_healthy"}},
		"url": fmt.Sprintf("postgres://%s:PASSWORD@postgres:5432/%s?sslmode=disable",
			pg.Environment["POSTGRES_USER"], pg.Environment["POSTGRES_DB"]),
		"volumes":     map[string]struct{ Name string }{"postgres-data": {}},
		"healthcheck": []string{"CMD", "pg_isready", "-U", pg.Environment["POSTGRES_USER"], "-d", pg.Environment["POSTGRES_DB"]},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("compose.postgres.yml (-got +want):\n%s", diff)
	}
}

// interpolation is a ${...} in a compose file.
var interpolation = regexp.MustCompile(`\$\{([^}]*)\}`)

// portable says whether podman-compose 1.0.3 reads ${expr} as docker
// compose does: a bare name, or a name with a non-empty :- default or :?
// message. An empty default (${VAR:-}) stays literal text there, and ${VAR}
// alone makes docker compose warn on every command when VAR is unset.
var portable = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*:[-?][^}]+$`)

// TestComposeInterpolationPortable holds both files to what both tools
// read alike, and to no profiles (podman-compose 1.0.3 starts every
// service).
func TestComposeInterpolationPortable(t *testing.T) {
	for _, name := range []string{"compose.yml", "compose.postgres.yml", "compose.replicas.yml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, m := range interpolation.FindAllStringSubmatch(line, -1) {
				if !portable.MatchString(m[1]) {
					t.Errorf("%s:%d: %s: podman-compose 1.0.3 and docker compose read it differently; give a non-empty default (${NAME:-value}) or move the setting to the env file", name, i+1, m[0])
				}
			}
		}
		for svc, s := range readCompose(t, name).Services {
			if len(s.Profiles) > 0 {
				t.Errorf("%s: service %s has profiles, which podman-compose 1.0.3 ignores: put it in a file of its own", name, svc)
			}
		}
	}
}

// TestComposeBuildArgDefaults: the base images compose builds with when
// the variables are unset are the Dockerfile's own defaults.
func TestComposeBuildArgDefaults(t *testing.T) {
	args := dockerfileArgs(t)
	expand := func(s string) string { return os.Expand(s, func(k string) string { return args[k] }) }
	bot := readCompose(t, "compose.yml").Services["bot"]
	if bot.Build == nil {
		t.Fatal("compose.yml: the bot service has no build")
	}
	got := map[string]string{}
	for k, v := range bot.Build.Args {
		m := interpolation.FindStringSubmatch(v)
		if m == nil {
			t.Errorf("compose.yml: build arg %s=%s is not taken from the environment", k, v)
			continue
		}
		_, def, _ := strings.Cut(m[1], ":-")
		got[k] = def
	}
	want := map[string]string{"BUILD_BASE": expand(args["BUILD_BASE"]), "RUNTIME_BASE": expand(args["RUNTIME_BASE"])}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("compose.yml build args' defaults (-got +want):\n%s", diff)
	}
}

// dockerfileArgs are the Dockerfile's ARG defaults, as written.
func dockerfileArgs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if kv, ok := strings.CutPrefix(line, "ARG "); ok {
			k, v, _ := strings.Cut(kv, "=")
			args[k] = v
		}
	}
	return args
}
