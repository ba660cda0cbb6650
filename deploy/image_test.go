package deploy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/appsetup"
)

// This test drives a container engine, so unlike product code it runs
// processes itself.

// imageWait bounds the wait for the container to become healthy.
const imageWait = 90 * time.Second

// engine finds a container engine that answers, or says why none does.
func engine(t *testing.T) string {
	t.Helper()
	var why []string
	for _, name := range []string{"docker", "podman"} {
		if _, err := exec.LookPath(name); err != nil {
			why = append(why, name+": not installed")
			continue
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		out, err := exec.CommandContext(ctx, name, "info").CombinedOutput()
		cancel()
		if err == nil {
			return name
		}
		why = append(why, name+": "+lastLine(out, err))
	}
	t.Skipf("no container engine can build the image here (%s)", strings.Join(why, "; "))
	return ""
}

func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}

// baseImageUnreachable says whether a failed build failed for want of its
// base images (no registry reachable), which is the machine's, not ours.
func baseImageUnreachable(out string) bool {
	for _, s := range []string{"failed to resolve source metadata", "pull access denied", "error pulling image",
		"failed to do request", "no such host", "initializing source docker://",
		"did not resolve to an alias", "no unqualified-search registries"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// TestImage builds the image, stores an App as setup does in a data volume,
// starts serve in it with compose.yml's security options and no
// KILROY_APP_ID, and checks that it answers /healthz on its published port
// (serve starts only after its sandbox self-test passed), runs as a user
// other than root, and passes its own HEALTHCHECK command; that nothing
// the self-test's jailed process left (bubblewrap's inner init, orphaned)
// stays unreaped; that SIGTERM stops serve gracefully, and the container
// exits with the bot's own status; and that without those options serve
// refuses to start, naming the sandbox.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a container image: not with -short")
	}
	eng := engine(t)
	tag := fmt.Sprintf("kilroy-bot-image-test:%d", os.Getpid())
	noImagesLeft(t, eng)
	build := exec.CommandContext(t.Context(), eng, buildArgs(t, eng, tag)...)
	if out, err := build.CombinedOutput(); err != nil {
		if baseImageUnreachable(string(out)) {
			t.Skipf("%s cannot pull the base images here (scripts/install-podman.sh builds local ones; export what it prints): %s",
				eng, lastLine(out, err))
		}
		t.Fatalf("%s build: %v\n%s", eng, err, out)
	}
	t.Cleanup(func() { exec.Command(eng, "rmi", "-f", tag).Run() })

	// Output, not CombinedOutput: podman without systemd says on stderr
	// that it cannot schedule the HEALTHCHECK.
	if out, err := exec.CommandContext(t.Context(), eng, "run", "--rm", tag, "version").Output(); err != nil ||
		!strings.HasPrefix(string(out), "kilroy-bot ") {
		t.Errorf("%s run %s version: %v\n%s", eng, tag, err, out)
	}
	exitStatusPassesThrough(t, eng, tag)
	volume := strings.NewReplacer(":", "-").Replace(tag) + "-data"
	storeApp(t, eng, tag, volume, "", nil)
	security := composeSecurityOpts(t)
	if out, err := exec.CommandContext(t.Context(), eng, serveArgs(tag, volume, nil, "--rm")...).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "sandbox self-test") {
		t.Errorf("serve without %v: %v, want it to refuse to start for want of a sandbox; output:\n%s", security, err, out)
	}
	name := strings.NewReplacer(":", "-").Replace(tag)
	run(t, eng, serveArgs(tag, volume, security, "-d", "--name", name)...)
	t.Cleanup(func() { exec.Command(eng, "rm", "-f", name).Run() })
	addr := strings.TrimSpace(run(t, eng, "port", name, "8080/tcp"))
	addr = strings.Split(addr, "\n")[0]
	deadline := time.Now().Add(imageWait)
	for !healthy("http://" + addr + "/healthz") {
		if time.Now().After(deadline) {
			out, _ := exec.Command(eng, "logs", name).CombinedOutput()
			t.Fatalf("no 200 from /healthz on %s within %s; container logs:\n%s", addr, imageWait, out)
		}
		time.Sleep(200 * time.Millisecond) // polling a port, not synchronising goroutines
	}
	if uid := strings.TrimSpace(run(t, eng, "exec", name, "id", "-u")); uid == "0" {
		t.Errorf("the container runs as root")
	}
	if out, err := exec.Command(eng, "exec", name, "kilroy-bot", "healthcheck").CombinedOutput(); err != nil {
		t.Errorf("the image's HEALTHCHECK command fails: %v\n%s", err, out)
	}
	logs, _ := exec.Command(eng, "logs", name).CombinedOutput()
	if strings.Contains(string(logs), "process limit does not hold") {
		t.Errorf("serve in the container warns that the sandbox's process limit does not hold:\n%s", logs)
	}
	waitNoStrays(t, eng, name)
	stopGracefully(t, eng, name)
}

// exitStatusPassesThrough checks that the container exits with the bot's
// own status, here 2 for an unknown subcommand, not its init's.
func exitStatusPassesThrough(t *testing.T, eng, tag string) {
	t.Helper()
	err := exec.CommandContext(t.Context(), eng, "run", "--rm", tag, "no-such-subcommand").Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("%s run %s no-such-subcommand: %v, want exit status 2 (usage)", eng, tag, err)
	}
}

// buildArgs is the build command: with the local base images that
// scripts/install-podman.sh made, where .ci/run exported them; with podman,
// in Docker's format (OCI images drop HEALTHCHECK). The Dockerfile's cache
// mounts keep the go command's caches between builds, this test's and
// TestComposeUp's alike.
func buildArgs(t *testing.T, eng, tag string) []string {
	args := []string{"build", "-t", tag}
	for arg, env := range map[string]string{"BUILD_BASE": "KILROY_IMAGE_BUILD_BASE", "RUNTIME_BASE": "KILROY_IMAGE_RUNTIME_BASE"} {
		if v := os.Getenv(env); v != "" {
			args = append(args, "--build-arg", arg+"="+v)
		}
	}
	if eng != "podman" {
		return append(args, "..")
	}
	// Without --layers=false podman keeps the build stage as an untagged
	// image of some 650 MB per run.
	args = append(args, "--format", "docker", "--layers=false")
	// A worktree's .git names a directory outside the build context, where
	// the go command's git must find it to stamp the version.
	if common := strings.TrimSpace(run(t, "git", "rev-parse", "--path-format=absolute", "--git-common-dir")); common != "" {
		if root, err := filepath.Abs(".."); err == nil && !strings.HasPrefix(common, root+string(filepath.Separator)) {
			args = append(args, "-v", common+":"+common+":ro")
		}
	}
	return append(args, "..")
}

// composeSecurityOpts are the bot service's security options in
// compose.yml, which TestComposeMatchesImageAndSetup holds to docs/serve.md's.
func composeSecurityOpts(t *testing.T) []string {
	t.Helper()
	return readCompose(t, "compose.yml").Services["bot"].SecurityOpt
}

// storedAppID and storedWebhookSecret are the App id and webhook secret
// storeApp stores, as setup would.
const (
	storedAppID         = 4242
	storedWebhookSecret = "image-test-webhook-secret"
)

// storeApp makes volume, with the create options given, hold what
// kilroy-bot setup stores (App id, key, webhook secret), written by the
// user of image tag, and removes the volume when t ends. The key is the
// PEM given, or a throwaway one when key is nil. The volume is mounted at
// /data (a data volume, setup's files in its github-app/) or, with at
// set, at that directory (the App volume of compose.replicas.yml, holding
// the files themselves).
func storeApp(t *testing.T, eng, tag, volume, at string, key []byte, create ...string) {
	t.Helper()
	run(t, eng, append(append([]string{"volume", "create"}, create...), volume)...)
	t.Cleanup(func() { exec.Command(eng, "volume", "rm", "-f", volume).Run() })
	if key == nil {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		key = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	}
	files := appsetup.FilesIn(dockerfileEnv(t, "KILROY_DATA_DIR"))
	mount := volume + ":/data"
	if at != "" {
		mount = volume + ":" + at
	}
	write := exec.CommandContext(t.Context(), eng, "run", "--rm", "-i", "-v", mount, "--entrypoint", "sh", tag, "-c",
		`umask 077 && mkdir -p "$1" && cat > "$2" && echo "$5" > "$3" && echo "$6" > "$4"`,
		"sh", files.Dir, files.PrivateKey(), files.AppID(), files.WebhookSecret(), strconv.Itoa(storedAppID), storedWebhookSecret)
	write.Stdin = bytes.NewReader(key)
	if out, err := write.CombinedOutput(); err != nil {
		t.Fatalf("storing the App in the data volume: %v\n%s", err, out)
	}
}

// serveArgs runs serve in tag as compose.yml does: the data dir on volume,
// the key and secret setup stored there, no KILROY_APP_ID, and GitHub on a
// closed port.
func serveArgs(tag, volume string, security []string, extra ...string) []string {
	// The tun device is pasta's (sandbox.network: public), as compose.yml
	// passes it.
	args := append([]string{"run", "--device", "/dev/net/tun"}, extra...)
	for _, o := range security {
		args = append(args, "--security-opt", o)
	}
	files := appsetup.FilesIn("/data")
	return append(args, "-v", volume+":/data",
		"-e", "KILROY_PRIVATE_KEY_FILE="+files.PrivateKey(), "-e", "KILROY_WEBHOOK_SECRET_FILE="+files.WebhookSecret(),
		"-e", "KILROY_GITHUB_URL=http://127.0.0.1:9/", "-p", "127.0.0.1::8080", tag)
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func healthy(u string) bool {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
