package deploy

import (
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
)

// deploy/.env holds POSTGRES_PASSWORD: git must not offer to commit it,
// and the image build (COPY . .) must not bake it into a layer.
func TestEnvFileIgnored(t *testing.T) {
	const env = "deploy/.env"
	b, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	if !dockerIgnores(string(b), env) {
		t.Errorf(".dockerignore does not leave out %s", env)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: cannot check .gitignore")
	}
	cmd := exec.Command("git", "check-ignore", "--quiet", "--no-index", env)
	cmd.Dir = ".."
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		t.Errorf(".gitignore does not ignore %s", env)
	} else if err != nil {
		t.Skipf("git check-ignore cannot run here (not a checkout?): %v", err)
	}
}

// dockerIgnores reports whether the last pattern of ignore matching name
// excludes it (a "!" pattern re-includes). Patterns are path.Match
// patterns relative to the build context, as docker reads them (without
// the ** extension, which .dockerignore here does not use).
func dockerIgnores(ignore, name string) bool {
	ignored := false
	for _, line := range strings.Split(ignore, "\n") {
		p := strings.TrimSpace(line)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		negate := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(strings.TrimPrefix(p, "!"), "/")
		if ok, _ := path.Match(strings.TrimSuffix(p, "/"), name); ok {
			ignored = !negate
		}
	}
	return ignored
}
