package deploy

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		"failed to do request", "no such host", "initializing source docker://"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// TestImage builds the image, starts serve in it with the sandbox on (serve
// refuses to start without a working sandbox), and checks that it runs as
// a user other than root, answers /healthz on its published port, and
// passes its own HEALTHCHECK command.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a container image: not with -short")
	}
	eng := engine(t)
	tag := fmt.Sprintf("kilroy-bot-image-test:%d", os.Getpid())
	build := exec.CommandContext(t.Context(), eng, "build", "-t", tag, "..")
	if out, err := build.CombinedOutput(); err != nil {
		if baseImageUnreachable(string(out)) {
			t.Skipf("%s cannot pull the base images here: %s", eng, lastLine(out, err))
		}
		t.Fatalf("%s build: %v\n%s", eng, err, out)
	}
	t.Cleanup(func() { exec.Command(eng, "rmi", "-f", tag).Run() })

	if out, err := exec.CommandContext(t.Context(), eng, "run", "--rm", tag, "version").CombinedOutput(); err != nil ||
		!strings.HasPrefix(string(out), "kilroy-bot ") {
		t.Errorf("%s run %s version: %v\n%s", eng, tag, err, out)
	}
	name := startContainer(t, eng, tag)
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
}

// startContainer runs serve in tag with the security options of
// compose.yml and a throwaway App key, and removes it when t ends.
func startContainer(t *testing.T, eng, tag string) string {
	t.Helper()
	keys := t.TempDir()
	if err := os.Chmod(keys, 0o755); err != nil {
		t.Fatal(err)
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	// Readable by the image's user: a throwaway key in a test directory.
	if err := os.WriteFile(filepath.Join(keys, "key.pem"), pemKey, 0o644); err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer(":", "-").Replace(tag)
	run(t, eng, "run", "-d", "--name", name,
		"--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"-e", "KILROY_APP_ID=1", "-e", "KILROY_WEBHOOK_SECRET=image-test-webhook-secret",
		"-e", "KILROY_PRIVATE_KEY_FILE=/keys/key.pem", "-v", keys+":/keys:ro",
		"-p", "127.0.0.1::8080", tag)
	t.Cleanup(func() { exec.Command(eng, "rm", "-f", name).Run() })
	return name
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
