package deploy

import (
	"cmp"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// composeTest is one podman-compose project of the compose files, isolated
// from a real deployment on this machine: its own project name (so its
// own containers and network), image tag, host port and env file.
type composeTest struct {
	files   []string // -f arguments, relative to the repository root
	project string
	image   string
	port    int
	env     []string
	// appVolume is the volume key setup's files go in, and appAt where
	// they are mounted to write them: the data volume by default.
	appVolume, appAt string
	// appKey is the App's private key (PEM) stored there; nil for a
	// throwaway one.
	appKey []byte
	// envFile is the bot's env file, written by up: githubURL is its
	// KILROY_GITHUB_URL, a closed port unless set.
	envFile, githubURL string
}

func newComposeTest(t *testing.T, files ...string) *composeTest {
	t.Helper()
	tag := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	c := &composeTest{files: files, project: "kilroy-compose-test-" + tag,
		image: "localhost/kilroy-compose-test:" + tag, port: freePort(t),
		envFile: filepath.Join(t.TempDir(), "bot.env"), githubURL: "http://127.0.0.1:9/"}
	c.env = append(os.Environ(),
		"KILROY_ENV_FILE="+c.envFile, "KILROY_IMAGE="+c.image, "KILROY_PORT="+strconv.Itoa(c.port),
		// podman build: Docker's format keeps HEALTHCHECK; no layer
		// cache, so that the build stage leaves no untagged image.
		"BUILDAH_FORMAT=docker", "BUILDAH_LAYERS=false")
	return c
}

// command is podman-compose with c's files and project, run from the
// repository root as the docs do.
func (c *composeTest) command(args ...string) *exec.Cmd {
	full := []string{"-p", c.project}
	for _, f := range c.files {
		full = append(full, "-f", f)
	}
	cmd := exec.Command("podman-compose", append(full, args...)...)
	cmd.Dir = ".."
	cmd.Env = c.env
	return cmd
}

// run runs podman-compose. Version 1.0.3 exits 0 even when podman fails,
// so callers check what they asked for.
func (c *composeTest) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.command(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman-compose %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// containers lists the project's containers, running or not.
func (c *composeTest) containers(t *testing.T) []string {
	t.Helper()
	return strings.Fields(run(t, "podman", "ps", "-a", "-q", "--filter", "label=io.podman.compose.project="+c.project))
}

// podmanCompose skips t unless podman-compose and podman can run here.
func podmanCompose(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a container image: not with -short")
	}
	if _, err := exec.LookPath("podman-compose"); err != nil {
		t.Skip("podman-compose is not installed (scripts/install-podman.sh installs it)")
	}
	if out, err := exec.CommandContext(t.Context(), "podman", "info").CombinedOutput(); err != nil {
		t.Skipf("podman-compose is installed but podman cannot run here: %s", lastLine(out, err))
	}
}

// skipIfVolumesExist skips t when a volume of c's project exists: what a
// killed test left, which the test's down -v would take over.
func (c *composeTest) skipIfVolumesExist(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		for key := range readCompose(t, f).Volumes {
			if name := c.volume(key); exec.Command("podman", "volume", "exists", name).Run() == nil {
				t.Skipf("volume %s exists here (what a killed test left: podman volume rm it); the test would take it over", name)
			}
		}
	}
}

// volume is the name of the compose files' volume key in c's project:
// the files name none themselves, so -p keeps projects apart.
func (c *composeTest) volume(key string) string { return c.project + "_" + key }

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitHealthy polls /healthz on the published port until it answers 200.
func (c *composeTest) waitHealthy(t *testing.T) {
	t.Helper()
	u := fmt.Sprintf("http://127.0.0.1:%d/healthz", c.port)
	deadline := time.Now().Add(imageWait)
	for !healthy(u) {
		if time.Now().After(deadline) {
			var logs []byte
			for _, id := range c.containers(t) {
				out, _ := exec.Command("podman", "logs", id).CombinedOutput()
				logs = append(logs, out...)
			}
			t.Fatalf("no 200 from %s within %s; container logs:\n%s", u, imageWait, logs)
		}
		time.Sleep(200 * time.Millisecond) // polling a port, not synchronising goroutines
	}
}

// TestComposeUp runs deploy/compose.yml with podman-compose as
// docs/serve.md says, the base images given as build args through the
// environment (scripts/install-podman.sh's local ones here): it builds,
// stores an App in the data volume as setup would, starts the bot and
// checks /healthz from the host, then down -v removes the containers and
// the volume. It leaves no image behind.
func TestComposeUp(t *testing.T) {
	podmanCompose(t)
	c := newComposeTest(t, "deploy/compose.yml")
	c.skipIfVolumesExist(t, "compose.yml")
	c.up(t)
	c.down(t, "compose.yml")
}

// TestComposeUpPostgres does the same with compose.postgres.yml added, and
// checks that the bot keeps its queue in that Postgres.
func TestComposeUpPostgres(t *testing.T) {
	podmanCompose(t)
	image := cmp.Or(os.Getenv("KILROY_POSTGRES_IMAGE"), "postgres:17")
	if exec.Command("podman", "image", "exists", image).Run() != nil {
		t.Skipf("no Postgres image %s here, and no registry to pull one from: set KILROY_POSTGRES_IMAGE to a local image like the official one (TestComposePostgres checks the file)", image)
	}
	c := newComposeTest(t, "deploy/compose.yml", "deploy/compose.postgres.yml")
	c.skipIfVolumesExist(t, "compose.yml", "compose.postgres.yml")
	c.env = append(c.env, "POSTGRES_PASSWORD=composetest", "KILROY_POSTGRES_IMAGE="+image)
	c.up(t)
	out := run(t, "podman", "exec", c.project+"_postgres_1", "psql", "-U", "kilroy", "-d", "kilroy", "-Atc",
		"select count(*) from information_schema.tables where table_schema = 'public'")
	if n, err := strconv.Atoi(strings.TrimSpace(out)); err != nil || n == 0 {
		t.Errorf("the bot made no tables in Postgres: %q", out)
	}
	c.down(t, "compose.yml", "compose.postgres.yml")
}

// up builds the image with podman-compose, stores an App in the bot's data
// volume, starts the project and waits for /healthz; cleanups remove all
// of it, and noImagesLeft checks that the build left no image.
func (c *composeTest) up(t *testing.T) {
	t.Helper()
	noImagesLeft(t, "podman")
	t.Cleanup(func() {
		exec.Command("podman", "rmi", "-f", c.image).Run()
		exec.Command("podman", "network", "rm", "-f", c.project+"_default").Run()
	})
	out := c.run(t, "build")
	if exec.Command("podman", "image", "exists", c.image).Run() != nil {
		if baseImageUnreachable(out) {
			t.Skipf("podman cannot pull the base images here (scripts/install-podman.sh builds local ones; export what it prints)")
		}
		t.Fatalf("podman-compose build made no image %s:\n%s", c.image, out)
	}
	// KILROY_APP_ID left empty as env.example has it: serve takes its
	// default (the app-id file in the data volume), not an empty id.
	settings := "KILROY_PUBLIC_URL=https://kilroy.example.test\nKILROY_APP_ID=\nKILROY_GITHUB_URL=" + c.githubURL + "\n"
	if err := os.WriteFile(c.envFile, []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	volume := c.volume(cmp.Or(c.appVolume, "kilroy-data"))
	// With the label podman-compose gives the volumes it creates, which
	// its down -v removes.
	storeApp(t, "podman", c.image, volume, c.appAt, c.appKey, "--label", "io.podman.compose.project="+c.project)
	t.Cleanup(func() { c.command("down", "-v").Run() })
	c.run(t, "up", "-d")
	c.waitHealthy(t)
}

// down runs down -v and checks that it removed the project's containers
// and the volumes the files name.
func (c *composeTest) down(t *testing.T, files ...string) {
	t.Helper()
	c.run(t, "down", "-v")
	if left := c.containers(t); len(left) > 0 {
		t.Errorf("down -v left containers: %v", left)
	}
	for _, f := range files {
		for key := range readCompose(t, f).Volumes {
			if exec.Command("podman", "volume", "exists", c.volume(key)).Run() == nil {
				t.Errorf("down -v left volume %s", c.volume(key))
			}
		}
	}
}
